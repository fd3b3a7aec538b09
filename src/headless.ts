// `huddle -p`: the same lead and team as the console, without a screen. The lead's final text
// goes to stdout; `--json` streams every event instead. Exit: 0 done, 1 failed, 2 usage/config, 3 budget.
import { existsSync, statSync } from 'node:fs';
import type { CliOptions } from './cli.js';
import { Team } from './agents/team.js';
import { ConfigError, MISSING_KEY_MESSAGE, hasCredentials, resolveConfig, type HuddleConfig } from './runtime/config.js';
import { scrub } from './runtime/store/file/event-log.js';
import { fileBackend } from './runtime/store/file/file-store.js';
import { EventHub, type HuddleEvent } from './runtime/events/events.js';
import { ModelClient, modelClientOptions } from './runtime/model/model-client.js';
import { addUsage, emptyUsage } from './runtime/model/pricing.js';
import { archiveTeam, unfinishedMembers } from './runtime/store/file/team-state.js';
import { Workspace } from './runtime/workspace/workspace.js';
import { LEAD_NAME } from './runtime/vocabulary.js';
import { sandboxStatus } from './runtime/sandbox/status.js';
import { BudgetConfigError, budgetStopSummary, loadBudgetSettings } from './runtime/budget/budget.js';

export async function runHeadless(options: CliOptions): Promise<number> {
  let config: HuddleConfig;
  try {
    config = resolveConfig({ cwd: options.cwd, model: options.model, apiKeyFile: options.apiKeyFile, maxTurns: options.maxTurns, permissionMode: options.permissionMode });
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }
  if (!hasCredentials(config)) return fail(MISSING_KEY_MESSAGE.replace(/^huddle: /, ''));
  if (!existsSync(config.cwd) || !statSync(config.cwd).isDirectory()) return fail(`workspace ${config.cwd} is not a directory`);

  const workspace = new Workspace(config.cwd);
  config.budget = options.budget;
  try {
    loadBudgetSettings(workspace.teamDir, config.budget); // a broken .team/budget.json is a configuration error
  } catch (error) {
    if (error instanceof BudgetConfigError) return fail(error.message);
    throw error;
  }
  let unfinished: string[];
  try {
    unfinished = unfinishedMembers(workspace.teamDir);
  } catch (error) {
    return fail((error as Error).message);
  }
  if (options.fresh) {
    const archived = archiveTeam(workspace.teamDir, workspace.tasksDir);
    if (archived) process.stderr.write(`huddle: archived the previous team to ${workspace.relative(archived)}\n`);
  } else if (unfinished.length && !options.resume) {
    return fail(
      `this workspace holds an unfinished team (${unfinished.join(', ')}); ` +
        'pass --resume to continue it or --fresh to start a new team (the old state is archived)',
    );
  }

  const sandbox = sandboxStatus();
  if (!sandbox.available) process.stderr.write(`huddle: ${sandbox.line}\n`);
  const hub = new EventHub();
  const secrets = [config.apiKey, config.authToken].filter((s): s is string => Boolean(s));
  const store = await fileBackend(workspace).open({ hub, secrets });
  const unsubscribeOutput = hub.subscribe(options.json ? jsonWriter(secrets) : stderrReporter(secrets));

  const started = performance.now();
  const team = await Team.open({ config, workspace, hub, store, backend: new ModelClient(modelClientOptions(config)) });
  if (options.resume) {
    // The team comes back with its conversations (Team.resumeMembers); the prompt follows as a new user turn.
    const { resumed, released } = await team.resumeMembers();
    process.stderr.write(`huddle: resumed ${resumed.map((r) => r.name).join(', ')}\n`);
    for (const { name, tasks, reason } of released) {
      process.stderr.write(`huddle: ${name} not resumed (${reason})${tasks ? `; released ${tasks} task(s)` : ''}\n`);
    }
  }

  const onSignal = () => void team.close('interrupted').finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  team.start();
  team.lead.prompt(options.prompt ?? '');
  // A hard budget limit with nobody to ask ends the run (exit 3), whatever the agents are doing.
  const raced = await Promise.race([waitForEnd(team, hub), new Promise<'budget'>((resolve) => team.budget.onExhausted(() => resolve('budget')))]);
  const result = team.budget.exhausted ? 'budget' : raced;
  const reason = result === 'settled' ? 'the run ended' : result === 'budget' ? `the budget ran out (${team.budget.exhausted!.reason})` : 'the run failed';
  await team.stopAll(reason);
  await team.ctx.roster.setStatus(LEAD_NAME, 'shutdown', { reason });
  await team.close(reason);

  const exitCode = result === 'settled' ? 0 : result === 'budget' ? 3 : 1;
  const budgetFields = result === 'budget' ? { reason: 'budget', budget: team.budget.exhausted } : {};
  hub.emit(LEAD_NAME, 'done', { ok: exitCode === 0, exit_code: exitCode, duration_ms: Math.round(performance.now() - started), ...budgetFields, ...usageSummary(team) });
  unsubscribeOutput();
  await store.close(reason);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);

  if (!options.json && result === 'settled') process.stdout.write(`${scrub(team.lead.lastText, secrets)}\n`);
  if (result === 'budget') {
    const spent = [team.lead, ...team.teammates.values()].map((a) => ({ name: a.name, costUsd: a.loop.totals.costUsd, modelCalls: a.loop.totals.modelCalls }));
    process.stderr.write(scrub(budgetStopSummary(team.budget.exhausted!, spent, team.budget.describe()), secrets));
  } else if (result !== 'settled') {
    const outcome = team.lead.lastOutcome;
    const why = outcome?.kind === 'failed' ? outcome.error : outcome?.kind === 'turn_limit' ? `turn limit reached (${outcome.limit} model calls)` : 'the lead failed';
    process.stderr.write(`huddle: ${scrub(why, secrets)}\n`);
  }
  return exitCode;
}

/** Resolves when the team is done (SPEC section 5) or the lead has failed. */
function waitForEnd(team: Team, hub: EventHub): Promise<'settled' | 'failed'> {
  return new Promise((resolve) => {
    let checking = false;
    let again = false;
    const finish = (result: 'settled' | 'failed') => {
      stopTurns();
      stopStatus();
      resolve(result);
    };
    const check = async () => {
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      do {
        again = false;
        const outcome = team.lead.lastOutcome;
        if (outcome && (outcome.kind === 'failed' || outcome.kind === 'turn_limit') && team.lead.isIdle) return finish('failed');
        if (outcome && (await team.isSettled())) return finish('settled');
      } while (again);
      checking = false;
    };
    const stopTurns = team.lead.onTurnEnd(() => void check());
    const stopStatus = hub.subscribe((event) => {
      if (event.type === 'status' || event.type === 'message_delivered') void check();
    });
  });
}

function usageSummary(team: Team) {
  const agents: Record<string, unknown> = {};
  let usage = emptyUsage();
  let cost = 0;
  for (const agent of [team.lead, ...team.teammates.values()]) {
    const totals = agent.loop.totals;
    agents[agent.name] = { ...totals.usage, cost_usd: totals.costUsd, model_calls: totals.modelCalls };
    usage = addUsage(usage, totals.usage);
    cost += totals.costUsd;
  }
  return { usage: { ...usage, cost_usd: cost }, agents };
}

function jsonWriter(secrets: string[]) {
  return (event: HuddleEvent) => {
    process.stdout.write(`${scrub(JSON.stringify(event), secrets)}\n`);
  };
}

/** Without --json, stderr says what a person running a script would want to know. */
function stderrReporter(secrets: string[]) {
  return (event: HuddleEvent) => reportToStderr(event, (text) => process.stderr.write(scrub(text, secrets)));
}

function reportToStderr(event: HuddleEvent, write: (text: string) => void): void {
  if (event.type === 'retry') {
    const seconds = (Number(event.delayMs) / 1000).toFixed(1);
    write(`huddle: ${event.agent}: ${String(event.reason)}; retrying in ${seconds} s (attempt ${Number(event.attempt) + 1})\n`);
  } else if (event.type === 'warning') {
    write(`huddle: warning: ${String(event.message)}\n`);
  } else if (event.type === 'error' && event.agent !== LEAD_NAME && !event.interrupted) {
    write(`huddle: ${event.agent}: ${String(event.message)}\n`);
  }
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
