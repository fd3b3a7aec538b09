// /budget: spend vs limits, set a limit of the team or one agent, or extend a reached one.
// The limits live in the running team (runtime/budget.ts); .team/budget.json sets them at start.
import { BUDGET_KINDS, BudgetConfigError, describeLimits, parseLimit, TEAM_SCOPE } from '../../runtime/budget/budget.js';
import type { Team } from '../../agents/team.js';
import type { CommandContext, CommandResult, SlashCommand } from './types.js';

const USAGE = '/budget [team|NAME KIND AMOUNT|off] · /budget extend [team|NAME] (KIND: usd, minutes, turns)';

/** Per-task spend lines for /cost (empty when nothing is tallied or no team is attached). */
export function taskSpendLines(team: Team | undefined): string[] {
  const lines = team?.spend?.taskLines() ?? [];
  return lines.length ? ['per task:', ...lines.map((line) => `  ${line}`)] : [];
}

function scopeNames(context: CommandContext): string[] {
  return [TEAM_SCOPE, ...context.state.order];
}

export function runBudget(team: Team, context: CommandContext, args: string): CommandResult {
  const words = args.trim().split(/\s+/).filter(Boolean);
  const budget = team.budget;
  if (words.length === 0) {
    context.controller.note(context.focus, budget.describe(context.state.order).join('\n'));
    return { kind: 'ok' };
  }
  if (words[0] === 'extend') {
    if (words.length > 2) return { kind: 'error', message: `usage: ${USAGE}` };
    const named = words[1];
    if (named !== undefined && named !== TEAM_SCOPE && !context.state.order.includes(named)) {
      return { kind: 'error', message: `no agent named '${named}' (agents: ${context.state.order.join(', ')})` };
    }
    // Without a name: every scope that is reached now (the team's, and each agent's own).
    const scopes = named ? [named] : [TEAM_SCOPE, ...context.state.order].filter((scope) => reached(team, scope));
    if (scopes.length === 0) return { kind: 'ok', message: 'no budget is reached; name one to raise it anyway: /budget extend team' };
    const lines = scopes.map((scope) => `${scope}: ${describeLimits(budget.extend(scope))}`);
    return { kind: 'ok', message: `extended ${lines.join('; ')}` };
  }
  const [scope, kind, amount, ...extra] = words;
  if (!scope || !kind || !amount || extra.length) return { kind: 'error', message: `usage: ${USAGE}` };
  if (scope !== TEAM_SCOPE && !context.state.order.includes(scope)) {
    return { kind: 'error', message: `no agent named '${scope}' (use team or one of: ${context.state.order.join(', ')})` };
  }
  try {
    if (amount === 'off') {
      parseLimit(kind, '1'); // checks the kind
      budget.set(scope, kind as (typeof BUDGET_KINDS)[number], undefined);
      return { kind: 'ok', message: `${scope}: no ${kind} limit` };
    }
    const limit = parseLimit(kind, amount.replace(/^\$/, ''));
    budget.set(scope, limit.kind, limit.value);
    const limits = scope === TEAM_SCOPE ? budget.settings.team : budget.limitsFor(scope);
    return { kind: 'ok', message: `${scope} budget: ${describeLimits(limits)}` };
  } catch (error) {
    if (error instanceof BudgetConfigError) return { kind: 'error', message: error.message };
    throw error;
  }
}

function reached(team: Team, scope: string): boolean {
  const spend = team.budget.spendOf(scope);
  const limits = scope === TEAM_SCOPE ? team.budget.settings.team : team.budget.limitsFor(scope);
  const minutes = (Date.now() - spend.startedAt) / 60_000;
  return (
    (limits.usd !== undefined && spend.usd >= limits.usd) ||
    (limits.turns !== undefined && spend.turns >= limits.turns) ||
    (limits.minutes !== undefined && minutes >= limits.minutes)
  );
}

export const BUDGET_COMMANDS: SlashCommand[] = [
  {
    name: 'budget',
    args: '[team|NAME KIND AMOUNT] | extend [NAME]',
    description: 'spend vs limits; set a limit (/budget team usd 5, /budget alice turns 40) or extend a reached one',
    complete(context, partial) {
      const words = partial.split(/\s+/);
      if (words.length > 2 && words[0] !== 'extend') return [...BUDGET_KINDS].filter((k) => k.startsWith(words.at(-1) ?? ''));
      const last = words.at(-1) ?? '';
      const options = words.length === 1 ? ['extend', ...scopeNames(context)] : scopeNames(context);
      return options.filter((word) => word.startsWith(last));
    },
    run(context, args) {
      const team = context.controller.team as Team | undefined;
      if (!team?.budget) return { kind: 'error', message: 'no team is running' };
      return runBudget(team, context, args);
    },
  },
];
