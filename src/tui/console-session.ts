// The console's session half: settings, the team's session, the bridge from its events to the
// screen's store, and the controller the keys talk to. run-console.ts imports this module only
// when it runs, so that the first frame can be drawn before the session core is loaded.
import { createInterface } from 'node:readline/promises';
import type { CliOptions } from '../session/cli-options.js';
import { openSession, type UnfinishedTeamPolicy } from '../session/open-session.js';
import { openControl } from '../session/control-intents.js';
import { resolveSettings, StartupError } from '../session/settings.js';
import type { TeamSession } from '../session/team-session.js';
import { Attention } from '../session/attention.js';
import { askToTrust } from '../session/trust-question.js';
import { Notifier } from '../runtime/notify/notifier.js';
import type { BacklogRun } from '../session/backlog-run.js';
import { ConsoleController } from './console-controller.js';
import { EventBridge } from './state/event-bridge.js';
import type { ConsoleStore } from './state/console-store.js';
import { InputHistory } from './state/input-history.js';
import { replayHistory } from './state/history.js';

export { StartupError };

const DEMO_PROMPT = 'Build a tiny greeting library with tests.';

export interface ConsoleSession {
  session: TeamSession;
  bridge: EventBridge;
  demo: boolean;
  /** The backlog this console works through (huddle --backlog SOURCE), once started. */
  backlog?: BacklogRun | undefined;
}

/** How far an open got, shared with the console, which may be told to quit meanwhile. */
export interface OpeningProgress {
  /** The session, once it is open (its teammates may be resuming). */
  session?: TeamSession;
  /** The person quit while it opened: nothing more starts. */
  stopping: boolean;
}

/**
 * Settings, then the session (asking about a team left unfinished through `unfinished`), its events
 * bridged into `store`, the panes filled with what was said before. Throws StartupError (one line).
 * Told to stop (`progress.stopping`) before the team resumes, it leaves the team to a later resume and returns 'quit'.
 */
export async function openConsoleSession(
  options: CliOptions,
  store: ConsoleStore,
  unfinished: UnfinishedTeamPolicy,
  progress: OpeningProgress = { stopping: false },
): Promise<ConsoleSession | 'quit'> {
  const settings = await resolveSettings(options, { missingKey: 'explain', untrusted: 'ignore' });
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new StartupError('the console needs a terminal; for scripts and CI use huddle -p "PROMPT"');
  }
  const demo = settings.demo;
  store.setState({
    model: settings.config.model,
    endpoint: demo ? 'built-in script' : settings.config.baseURL ? new URL(settings.config.baseURL).host : '',
    demo,
    keyMissing: settings.keyMissing,
    sandboxOff: settings.sandboxOff,
  });
  const opened = await openSession(settings, { fresh: options.fresh, resume: options.resume, unfinished });
  if (opened === 'quit') return 'quit';
  const session = opened;
  progress.session = session;
  if (progress.stopping) {
    await session.close({ reason: 'the console was closed while it opened', resumable: true });
    return 'quit';
  }
  // Before the resume, so the panes see the resumed agents' status events.
  const bridge = new EventBridge(session.hub, store);
  // Each pane starts with what its agent said before, from the team's record (nothing after --fresh).
  if (session.decision !== 'fresh') replayHistory(store, await session.earlierEvents(), session.decision === 'resume');
  await session.resume();
  return { session, bridge, demo };
}

/** What the keys need once the session is open: the controller and the person's input history. */
export function consoleController(session: TeamSession, store: ConsoleStore, quit: () => void): { controller: ConsoleController; history: InputHistory } {
  const controller = new ConsoleController(session, store, quit);
  // What the person should know before anything runs: deprecated files, servers that did not start, what the repository runs.
  for (const notice of session.notices) controller.note('lead', notice, 'warn');
  return { controller, history: InputHistory.forTeamDir(session.workspace.teamDir) };
}

/** The session runs: the control socket, notifications, the demo's prompt, the trust question. Returns what stops them. */
export async function startConsoleSession(opened: ConsoleSession, controller: ConsoleController, backlog?: CliOptions['backlog']): Promise<() => void> {
  const { session, demo } = opened;
  // `huddle status/send/interrupt` from other shells reach this console through its control socket.
  await openControl(session, 'console');
  // The bell, desktop notifications and the tab title ("needs you: N"), as the settings say.
  const notifier = new Notifier({ settings: session.settings?.notifications, write: (text) => void process.stdout.write(text) });
  const stopAttention = new Attention(session, notifier).watch();
  session.start();
  if (demo) session.prompt(DEMO_PROMPT);
  if (backlog) opened.backlog = await startBacklog(session, controller, backlog);
  // Workspace settings that widen trust were left out: ask the person (docs/trust.md).
  void askToTrust(session, (text, tone) => controller.note('lead', text, tone));
  return stopAttention;
}

/** After the console closed: the session ends, and what the person should know is said on the normal screen. */
export async function closeConsoleSession(opened: ConsoleSession, controller: ConsoleController | undefined): Promise<void> {
  const { session, bridge, demo } = opened;
  bridge.close();
  controller?.close();
  // The record lists each issue of the backlog, as a headless run's does.
  const backlogRecord = opened.backlog ? await opened.backlog.records() : undefined;
  opened.backlog?.close();
  await session.close({ reason: 'the console was closed', ...(backlogRecord ? { record: { backlog: backlogRecord } } : {}) });
  // As after a headless run: the repository rebuilt if it is broken, the person's own changes the session took away.
  for (const line of await session.workspaceAtRunEnd()) process.stderr.write(session.scrub(`huddle: ${line}\n`));
  if (demo) process.stdout.write(`huddle demo: the files the team wrote are in ${session.workspace.root}\n`);
}

/** `huddle --backlog SOURCE`: the backlog's run started, /backlog in view, the lead given its prompt; or one line saying why not. */
async function startBacklog(session: TeamSession, controller: ConsoleController, flags: NonNullable<CliOptions['backlog']>): Promise<BacklogRun | undefined> {
  // GitHub's client loads only for a console that works through a backlog.
  const { openBacklogRun } = await import('../session/backlog-setup.js');
  const opened = await openBacklogRun(session, { root: session.workspace.root, ...flags, sources: [flags.source] });
  if ('error' in opened) {
    controller.note('lead', `the backlog was not started: ${opened.error}`, 'error');
    return undefined;
  }
  for (const line of [...opened.skipped, ...opened.notes]) controller.note('lead', line, 'warn');
  controller.attachBacklog(flags.source, opened.progress);
  controller.store.setState({ view: 'backlog' });
  session.prompt(opened.prompt);
  return opened.run;
}

/** An unfinished team in the workspace and no flag to decide: ask the person. */
export async function askAboutOldTeam(unfinished: string[]): Promise<'resume' | 'fresh' | 'quit'> {
  const question = `This workspace holds an unfinished team (${unfinished.join(', ')}). [r]esume it, start [f]resh (the old one is archived), or [q]uit? `;
  if (process.stdin.isTTY) return singleKey(question);
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      const answer = (await prompt.question(question)).trim().toLowerCase();
      if (answer.startsWith('r')) return 'resume';
      if (answer.startsWith('f')) return 'fresh';
      if (answer.startsWith('q')) return 'quit';
    }
  } finally {
    prompt.close();
  }
}

/** The question answered by one key, as it looks (r, f or q; Ctrl+C quits), without Enter. */
function singleKey(question: string): Promise<'resume' | 'fresh' | 'quit'> {
  const answers: Record<string, 'resume' | 'fresh' | 'quit'> = { r: 'resume', f: 'fresh', q: 'quit', '\x03': 'quit' };
  process.stdout.write(question);
  process.stdin.setRawMode(true);
  process.stdin.resume();
  return new Promise((resolve) => {
    const onData = (data: Buffer) => {
      const key = data.toString('utf8').toLowerCase();
      const answer = answers[key];
      if (!answer) return; // anything else: the question stays until one of its keys
      process.stdin.off('data', onData);
      process.stdin.setRawMode(false);
      process.stdin.pause();
      process.stdout.write(`${key === '\x03' ? 'q' : key}\n`);
      resolve(answer);
    };
    process.stdin.on('data', onData);
  });
}
