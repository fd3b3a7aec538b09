// /budget: spend vs limits, set a limit of the team or one agent, or extend a reached one.
// The limits live in the running team (intents over the session's budget); .team/budget.json
// sets them at start.
import { BUDGET_KINDS, TEAM_SCOPE } from '../../session/budget-intents.js';
import type { CommandContext, CommandResult, SlashCommand } from './types.js';

const USAGE = '/budget [team|NAME KIND AMOUNT|off] · /budget extend [team|NAME] (KIND: usd, minutes, turns)';

/** Per-task spend lines for /cost (empty when nothing is tallied). */
export function taskSpendLines(context: CommandContext): string[] {
  const lines = context.controller.taskSpendLines();
  return lines.length ? ['per task:', ...lines.map((line) => `  ${line}`)] : [];
}

function scopeNames(context: CommandContext): string[] {
  return [TEAM_SCOPE, ...context.state.order];
}

export function runBudget(context: CommandContext, args: string): CommandResult {
  const words = args.trim().split(/\s+/).filter(Boolean);
  const { controller, state } = context;
  if (words.length === 0)
    return { kind: 'page', title: 'Budget: spend against the limits · /budget SCOPE KIND AMOUNT sets one', lines: controller.budgetLines(state.order) };
  if (words[0] === 'extend') {
    if (words.length > 2) return { kind: 'error', message: `usage: ${USAGE}` };
    const named = words[1];
    if (named !== undefined && named !== TEAM_SCOPE && !state.order.includes(named)) {
      return { kind: 'error', message: `no agent named '${named}' (agents: ${state.order.join(', ')})` };
    }
    // Without a name: every scope that is reached now (the team's, and each agent's own).
    return { kind: 'ok', message: controller.extendBudget(named, state.order) };
  }
  const [scope, kind, amount, ...extra] = words;
  if (!scope || !kind || !amount || extra.length) return { kind: 'error', message: `usage: ${USAGE}` };
  if (scope !== TEAM_SCOPE && !state.order.includes(scope)) {
    return { kind: 'error', message: `no agent named '${scope}' (use team or one of: ${state.order.join(', ')})` };
  }
  try {
    return { kind: 'ok', message: controller.setBudget(scope, kind, amount) };
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
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
    run: (context, args) => runBudget(context, args),
  },
];
