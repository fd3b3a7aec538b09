// `huddle -p`: the same lead and team as the console, without a screen. The lead's final text
// goes to stdout; `--json` streams every event instead. Exit: 0 done, 1 failed, 2 usage/config.
import { existsSync, statSync } from 'node:fs';
import type { CliOptions } from './cli.js';
import { Team } from './agents/team.js';
import { ConfigError, MISSING_KEY_MESSAGE, hasCredentials, resolveConfig, type HuddleConfig } from './runtime/config.js';
import { EventLog, scrub } from './runtime/event-log.js';
import { EventHub, type HuddleEvent } from './runtime/events.js';
import { ModelClient, modelClientOptions } from './runtime/model-client.js';
import { addUsage, emptyUsage } from './runtime/pricing.js';
import { archiveTeam, unfinishedMembers } from './runtime/team-state.js';
import { Workspace } from './runtime/workspace.js';
import { LEAD_NAME } from './agents/prompts.js';

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

  const hub = new EventHub();
  const secrets = [config.apiKey, config.authToken].filter((s): s is string => Boolean(s));
  const log = new EventLog(hub, `${workspace.teamDir}/logs`, { secrets });
  const unsubscribeOutput = hub.subscribe(options.json ? jsonWriter(secrets) : stderrReporter(secrets));

  const started = performance.now();
  const team = await Team.open({ config, workspace, hub, backend: new ModelClient(modelClientOptions(config)) });
  if (options.resume) {
    for (const { name, tasks } of await team.releaseUnresumable()) {
      if (tasks) process.stderr.write(`huddle: released ${tasks} task(s) held by ${name}\n`);
    }
  }

  const onSignal = () => void team.close('interrupted').finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  team.start();
  team.lead.prompt(options.prompt ?? '');
  const result = await waitForEnd(team, hub);
  const reason = result === 'settled' ? 'the run ended' : 'the run failed';
  await team.stopAll(reason);
  await team.ctx.roster.setStatus(LEAD_NAME, 'shutdown', { reason });
  await team.close(reason);

  const exitCode = result === 'settled' ? 0 : 1;
  hub.emit(LEAD_NAME, 'done', { ok: exitCode === 0, exit_code: exitCode, duration_ms: Math.round(performance.now() - started), ...usageSummary(team) });
  unsubscribeOutput();
  log.close();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);

  if (!options.json && result === 'settled') process.stdout.write(`${scrub(team.lead.lastText, secrets)}\n`);
  if (result !== 'settled') {
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
