// `huddle` (and `huddle demo`): the full-screen console, a thin face over the same session core
// (src/session) that headless runs use. It asks the person what to do with an unfinished team,
// renders the store the session's events fill, and sends intents through one controller.
import { createInterface } from 'node:readline/promises';
import { createElement } from 'react';
import type { CliOptions } from '../session/cli-options.js';
import { openSession } from '../session/open-session.js';
import { openControl } from '../session/control-intents.js';
import { resolveSettings, StartupError } from '../session/settings.js';
import type { TeamSession } from '../session/team-session.js';
import { Attention } from '../session/attention.js';
import { askToTrust } from '../session/trust-question.js';
import { Notifier } from '../runtime/notify/notifier.js';
import { ConsoleController } from './console-controller.js';
import type { BacklogRun } from '../session/backlog-run.js';
import { EventBridge } from './state/event-bridge.js';
import { createConsoleStore } from './state/console-store.js';
import { InputHistory } from './state/input-history.js';
import { replayHistory } from './state/history.js';

const DEMO_PROMPT = 'Build a tiny greeting library with tests.';

export async function runConsole(options: CliOptions): Promise<number> {
  let session: TeamSession;
  let bridge: EventBridge;
  let store: ReturnType<typeof createConsoleStore>;
  let demo = false;
  try {
    const settings = await resolveSettings(options, { missingKey: 'explain', untrusted: 'ignore' });
    demo = settings.demo;
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      throw new StartupError('the console needs a terminal; for scripts and CI use huddle -p "PROMPT"');
    }
    store = createConsoleStore({
      model: settings.config.model,
      endpoint: demo ? 'built-in script' : settings.config.baseURL ? new URL(settings.config.baseURL).host : '',
      demo,
      keyMissing: settings.keyMissing,
      sandboxOff: settings.sandboxOff,
    });
    const consoleStore = store;
    const opened = await openSession(settings, {
      fresh: options.fresh,
      resume: options.resume,
      unfinished: askAboutOldTeam,
    });
    if (opened === 'quit') return 0;
    session = opened;
    // Before the resume, so the panes see the resumed agents' status events.
    bridge = new EventBridge(session.hub, consoleStore);
  } catch (error) {
    if (error instanceof StartupError) return fail(error.message);
    throw error;
  }
  // Each pane starts with what its agent said before, from the team's record (nothing after --fresh).
  if (session.decision !== 'fresh') replayHistory(store, await session.earlierEvents(), session.decision === 'resume');
  await session.resume();
  // `huddle status/send/interrupt` from other shells reach this console through its control socket.
  await openControl(session, 'console');
  const history = InputHistory.forTeamDir(session.workspace.teamDir);

  const { render } = await import('ink');
  const { App } = await import('./components/App.js');
  let resolveQuit!: () => void;
  const quitRequested = new Promise<void>((resolve) => (resolveQuit = resolve));
  const controller = new ConsoleController(session, store, resolveQuit);
  // What the person should know before anything runs: deprecated files, servers that did not start, what the repository runs.
  for (const notice of session.notices) controller.note('lead', notice, 'warn');
  const instance = render(createElement(App, { store, controller, history, quit: resolveQuit }), {
    alternateScreen: true,
    exitOnCtrlC: false,
    interactive: true,
    incrementalRendering: true,
    maxFps: 30,
  });
  const restoreTerminal = () => {
    try {
      instance.unmount();
    } catch {
      // Already gone.
    }
    // Belt and braces: leave the alternate screen, show the cursor, end bracketed paste.
    process.stdout.write('\x1b[?2004l\x1b[?25h\x1b[?1049l');
  };
  const onCrash = (error: unknown) => {
    restoreTerminal();
    process.stderr.write(`huddle crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.once(signal, resolveQuit);

  // Highlighting costs ~100 ms to load: after the first frame, not before it.
  const consoleStore = store;
  void import('./render/markdown.js').then(({ preloadHighlighter }) => preloadHighlighter()).then(() => consoleStore.setState({ highlighterReady: true }));

  // The bell, desktop notifications and the tab title ("needs you: N"), as the settings say.
  const notifier = new Notifier({ settings: session.settings?.notifications, write: (text) => void process.stdout.write(text) });
  const stopAttention = new Attention(session, notifier).watch();

  session.start();
  if (demo) session.prompt(DEMO_PROMPT);
  const backlog = options.backlog ? await startBacklog(session, controller, options.backlog) : undefined;
  // Workspace settings that widen trust were left out: ask the person (docs/trust.md).
  void askToTrust(session, (text, tone) => controller.note('lead', text, tone));

  await quitRequested;
  stopAttention();
  restoreTerminal();
  bridge.close();
  controller.close();
  // The record lists each issue of the backlog, as a headless run's does.
  const backlogRecord = backlog ? await backlog.records() : undefined;
  backlog?.close();
  await session.close({ reason: 'the console was closed', ...(backlogRecord ? { record: { backlog: backlogRecord } } : {}) });
  // As after a headless run: the repository rebuilt if it is broken, the person's own changes the session took away.
  for (const line of await session.workspaceAtRunEnd()) process.stderr.write(session.scrub(`huddle: ${line}\n`));
  if (demo) process.stdout.write(`huddle demo: the files the team wrote are in ${session.workspace.root}\n`);
  return 0;
}

/** `huddle --backlog SOURCE`: the backlog's run started, /backlog in view, the lead given its prompt; or one line saying why not. */
async function startBacklog(session: TeamSession, controller: ConsoleController, flags: NonNullable<CliOptions['backlog']>): Promise<BacklogRun | undefined> {
  // GitHub's client loads only for a console that works through a backlog.
  const { openBacklogRun } = await import('../session/backlog-setup.js');
  const opened = await openBacklogRun(session, { root: session.workspace.root, ...flags });
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
async function askAboutOldTeam(unfinished: string[]): Promise<'resume' | 'fresh' | 'quit'> {
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

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
