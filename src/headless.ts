// `huddle -p`: the same lead and team as the console, without a screen; a thin face over the
// session core (src/session). stdout: the lead's final text (`--output-format text`), one result
// object (`json`), Claude Code's headless line format (`stream-json`, session/stream-json.ts), or
// with `--json` every event. stderr ends with the run record's summary (runtime/record). Exit: 0
// done, 1 failed (or stalled), 2 usage/config, 3 budget, 130 interrupted (Ctrl+C: the team is left
// to `--resume`).
import { INTERRUPTED, untilInterrupted } from './session/until-interrupted.js';
import type { CliOptions } from './session/cli-options.js';
import { openSession } from './session/open-session.js';
import { openControl } from './session/control-intents.js';
import { resolveSettings, StartupError } from './session/settings.js';
import { announceRunEnd, watchHeadless } from './session/attention.js';
import type { RunEnd, TeamSession } from './session/team-session.js';
import type { EventListener, HuddleEvent } from './runtime/events/events.js';
import { budgetStopSummary } from './runtime/budget/budget.js';
import { scrub } from './runtime/store/file/event-log.js';
import { LEAD_NAME } from './runtime/vocabulary.js';
import { sandboxStatus } from './runtime/sandbox/status.js';
import { summaryLines } from './runtime/record/run-record.js';
import { claudeMcpStatus, StreamJsonView, type ResultSubtype } from './session/stream-json.js';
import { chooseSessionId, storeSessionId } from './session/session-id.js';
import type { BacklogIssueRecord } from './runtime/record/backlog-record.js';

declare const __HUDDLE_VERSION__: string;
const VERSION = typeof __HUDDLE_VERSION__ === 'string' ? __HUDDLE_VERSION__ : '0.0.0-dev';

/** What a face that drives the run itself adds (a backlog run, faces/backlog-cli.ts). */
export interface HeadlessDriver {
  /** After the team starts: sets the team up and returns the lead's prompt. */
  opened(session: TeamSession): Promise<string>;
  /** Once the run is over, before the session closes: entries for the record, one line each for stderr. */
  ended(session: TeamSession): Promise<{ backlog: BacklogIssueRecord[]; lines: string[] }>;
}

export async function runHeadless(options: CliOptions, driver?: HeadlessDriver): Promise<number> {
  let session: TeamSession;
  let secrets: string[] = [];
  const format = options.json ? 'events' : (options.outputFormat ?? 'text');
  // stream-json and json: a view of the events in Claude Code's format (it writes through `secrets`, set below).
  let claudeFormat: StreamJsonView | undefined;
  try {
    const settings = await resolveSettings(options, { missingKey: 'refuse' });
    secrets = settings.secrets;
    // The session id: kept with the team, so --continue reports the same one and --resume ID finds it.
    const chosen = chooseSessionId(settings.workspace.teamDir, options);
    if ('error' in chosen) return fail(chosen.error);
    claudeFormat =
      format === 'stream-json' || format === 'json'
        ? new StreamJsonView({
            stream: format === 'stream-json',
            sessionId: chosen.id,
            partial: options.includePartialMessages ?? false,
            write: (line) => writeLine(line, secrets),
          })
        : undefined;
    const view = claudeFormat;
    const report = options.json ? jsonWriter(secrets) : stderrReporter(secrets);
    const opened = await openSession(settings, {
      fresh: options.fresh,
      resume: options.resume,
      unfinished: 'refuse',
      observe: view
        ? (event) => {
            report(event);
            view.onEvent(event);
          }
        : report,
    });
    if (opened === 'quit') return 0;
    session = opened;
  } catch (error) {
    if (error instanceof StartupError) return fail(scrub(error.message, secrets));
    throw error;
  }
  // `huddle status/send/interrupt` from other shells reach this run through its control socket.
  await openControl(session, 'headless');
  // Plans waiting for the person and failures reach the Notification hooks and the webhook as they happen.
  const stopWatching = watchHeadless(session);
  session.closeWith(async () => stopWatching());
  if (session.archived) process.stderr.write(`huddle: archived the previous team to ${session.archived}\n`);
  const sandbox = sandboxStatus();
  if (!sandbox.available) process.stderr.write(`huddle: ${sandbox.line}\n`);
  if (claudeFormat) storeSessionId(session.workspace.teamDir, claudeFormat.sessionId);
  const mcpServers = session.mcpStatus().map((server) => ({ name: server.name, status: claudeMcpStatus(server.state) }));
  claudeFormat?.init({
    ...session.describeLead(),
    ...(options.permissionModeName ? { permissionMode: options.permissionModeName } : {}),
    version: VERSION,
    mcpServers,
  });

  const started = performance.now();
  // Ctrl+C (or SIGTERM): stop at once, but leave the team to be resumed. A second one exits now.
  const { interrupted, stop: stopListening } = untilInterrupted();

  const report = await session.resume();
  if (report) {
    // The team comes back with its conversations; the prompt follows as a new user turn.
    process.stderr.write(`huddle: resumed ${report.resumed.map((r) => r.name).join(', ')}\n`);
    for (const { name, tasks, reason } of report.released) {
      process.stderr.write(`huddle: ${name} not resumed (${reason})${tasks ? `; released ${tasks} task(s)` : ''}\n`);
    }
  }
  session.start();
  let prompt = options.prompt ?? '';
  if (driver) {
    try {
      prompt = await driver.opened(session);
    } catch (error) {
      await session.close({ reason: 'the run could not start' });
      return fail(session.scrub((error as Error).message));
    }
  }
  session.prompt(prompt);
  const end = await Promise.race([session.untilDone(), interrupted]);
  const driven = driver ? await driver.ended(session) : undefined;

  // The repository rebuilt if the run broke it; the person's own changes it took away, said once.
  for (const line of await session.workspaceAtRunEnd()) process.stderr.write(session.scrub(`huddle: ${line}\n`));
  const exitCode = exitCodeOf(end);
  const reason = describeEnd(end);
  if (end !== 'interrupted') await announceRunEnd(session, end, `huddle -p: ${reason} (exit ${exitCode})`);
  await session.close({
    reason,
    resumable: end === 'interrupted',
    record: { ...(claudeFormat ? { sessionId: claudeFormat.sessionId } : {}), ...(driven ? { backlog: driven.backlog } : {}) },
    done: {
      ok: exitCode === 0,
      exit_code: exitCode,
      duration_ms: Math.round(performance.now() - started),
      ...(end !== 'interrupted' && end.kind === 'budget' ? { reason: 'budget', budget: end.stop } : {}),
      ...(end === 'interrupted' ? { reason: 'interrupted' } : {}),
      ...session.usageSummary(),
    },
  });
  stopListening();
  process.stderr.write(session.scrub(afterword(session, end, options)));
  if (claudeFormat) {
    const usage = session.usageSummary().usage;
    const { cost_usd: totalCostUsd, ...tokens } = usage;
    const failure = end !== 'interrupted' && end.kind === 'settled' ? undefined : reason;
    claudeFormat.result({
      subtype: subtypeOf(end, session),
      result: failure === undefined ? session.leadResult().text : session.leadResult().text || failure,
      durationMs: Math.round(performance.now() - started),
      totalCostUsd,
      usage: tokens,
      exitCode,
      ...(failure ? { reason: failure } : {}),
      ...(driven ? { backlog: driven.backlog } : {}),
    });
  } else if (format === 'text' && end !== 'interrupted' && end.kind === 'settled') {
    process.stdout.write(`${session.scrub(session.leadResult().text)}\n`);
  }
  // The run record: where it is, and what it says, as the last lines on stderr (stdout is for scripts).
  if (session.recorded) {
    const lines = [`run record: ${session.recorded.file}`, ...summaryLines(session.recorded.record)];
    process.stderr.write(session.scrub(lines.map((line) => `huddle: ${line}\n`).join('')));
  }
  if (driven?.lines.length) process.stderr.write(session.scrub(driven.lines.map((line) => `huddle: ${line}\n`).join('')));
  return exitCode;
}

/** The result's `subtype`, in Claude Code's words. */
function subtypeOf(end: RunEnd | 'interrupted', session: TeamSession): ResultSubtype {
  if (end === 'interrupted') return 'error_during_execution';
  if (end.kind === 'settled') return 'success';
  if (end.kind === 'budget') return end.stop.kind === 'usd' ? 'error_max_budget_usd' : 'error_during_execution';
  return session.leadResult().outcome?.kind === 'turn_limit' ? 'error_max_turns' : 'error_during_execution';
}

function writeLine(line: Record<string, unknown>, secrets: string[]): void {
  process.stdout.write(`${scrub(JSON.stringify(line), secrets)}\n`);
}

function exitCodeOf(end: RunEnd | 'interrupted'): number {
  if (end === 'interrupted') return INTERRUPTED;
  return end.kind === 'settled' ? 0 : end.kind === 'budget' ? 3 : 1;
}

function describeEnd(end: RunEnd | 'interrupted'): string {
  if (end === 'interrupted') return 'interrupted';
  if (end.kind === 'settled') return 'the run ended';
  if (end.kind === 'budget') return `the budget ran out (${end.stop.reason})`;
  if (end.kind === 'stalled') return `${end.agent} stalled`;
  if (end.kind === 'store') return "the team's state could not be written";
  if (end.kind === 'unfinished') return 'the run ended with tasks not done';
  return 'the run failed';
}

/** What stderr says once the run is over (nothing after a run that ended well). */
function afterword(session: TeamSession, end: RunEnd | 'interrupted', options: CliOptions): string {
  if (end === 'interrupted') {
    // A prompt from stdin or a file (maybe a megabyte) is not repeated: the command to continue says where it came from.
    const prompt =
      options.promptSource === 'file'
        ? `--prompt-file ${JSON.stringify(options.promptFile ?? '')}`
        : options.promptSource === 'stdin' || (options.prompt ?? '').length > 200
          ? '"…"'
          : JSON.stringify(options.prompt ?? '…');
    return (
      'huddle: interrupted; the team is left as it was in this workspace. ' +
      `Continue it with: huddle ${options.promptSource === 'file' ? prompt : `-p ${prompt}`} --resume (or start over with --fresh)\n`
    );
  }
  if (end.kind === 'settled') return '';
  if (end.kind === 'budget') return budgetStopSummary(end.stop, session.spend(), session.budget.describe([]));
  // Without --json the failure was already said on stderr, as the warning it was emitted as.
  if (end.kind === 'store') return options.json ? `huddle: ${end.message}\n` : '';
  if (end.kind === 'stalled') return `huddle: ${end.message}; it was interrupted and the run failed (HUDDLE_STALL_MS sets how long counts as a stall)\n`;
  if (end.kind === 'unfinished') return `huddle: ${end.message}\n`;
  const outcome = session.leadResult().outcome;
  const why =
    outcome?.kind === 'failed' ? outcome.error : outcome?.kind === 'turn_limit' ? `turn limit reached (${outcome.limit} model calls)` : 'the lead failed';
  return `huddle: ${why}\n`;
}

function jsonWriter(secrets: string[]): EventListener {
  return (event) => {
    process.stdout.write(`${scrub(JSON.stringify(event), secrets)}\n`);
  };
}

/** Without --json, stderr says what a person running a script would want to know. */
function stderrReporter(secrets: string[]): EventListener {
  return (event) => {
    const line = reportLine(event);
    if (line) process.stderr.write(scrub(`huddle: ${line}\n`, secrets));
  };
}

function reportLine(event: HuddleEvent): string | undefined {
  switch (event.type) {
    case 'retry':
      return `${event.agent}: ${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)} s (attempt ${event.attempt + 1})`;
    case 'warning':
      // Some warnings carry their text in `error`, with the file it is about (a broken task file).
      return `warning: ${event.message ?? ([event.file, event.error].filter(Boolean).join(': ') || 'something was skipped or repaired')}`;
    case 'error':
      return event.agent !== LEAD_NAME && !event.interrupted ? `${event.agent}: ${event.message}` : undefined;
    default:
      return undefined;
  }
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
