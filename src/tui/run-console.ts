// `huddle` (and `huddle demo`): the full-screen console, a thin face over the same session core
// (src/session) that headless runs use. It asks the person what to do with an unfinished team,
// renders the store the session's events fill, and sends intents through one controller.
//
// A new team in a workspace without one draws its first frame first: Ink and the screen load
// while nothing else does, and the session core (settings, the team, its tools) loads and opens
// behind the drawn input line, whose keys wait for it (docs/console.md#starting). Everywhere else
// (a team to resume or ask about, the demo, no terminal) the session opens before the first frame.
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import { createElement } from 'react';
import type { Instance } from 'ink';
import type { CliOptions } from '../session/cli-options.js';
import { probeSandbox } from '../runtime/sandbox/status.js';
import type { ConsoleController } from './console-controller.js';
import { createConsoleStore } from './state/console-store.js';
import type { InputHistory } from './state/input-history.js';
import type { ConsoleSession, OpeningProgress } from './console-session.js';

/** How long a quit waits for a team that is already open to finish resuming, so that it is suspended rather than cut off. */
const LATE_OPEN_MS = 10_000;

export async function runConsole(options: CliOptions): Promise<number> {
  const early = drawsFirst(options);
  // marked (markdown) loads after the first frame when it is drawn first, and always before the session opens.
  const markdown = () => import('./render/markdown.js').then(({ loadMarkdown }) => loadMarkdown());
  const screen = Promise.all([import('ink'), import('./components/App.js'), early ? undefined : markdown()]);
  // Drawing first, the session core loads after the frame, not beside it.
  const core = early ? undefined : import('./console-session.js');
  const store = createConsoleStore({ model: options.model ?? '', endpoint: '' });
  let resolveQuit!: () => void;
  const quitRequested = new Promise<void>((resolve) => (resolveQuit = resolve));
  // `on`, not `once`: execa's signal-exit (loaded with the session core, after this) re-raises a
  // signal that no other listener is left to handle, which would kill the console before it closes its team.
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.on(signal, resolveQuit);
  // Until the screen is drawn the terminal is not raw: Ctrl+C comes as SIGINT (a resume's compaction can take a
  // while on a blank screen). It quits as SIGTERM does, saying so; pressed again it leaves at once.
  let interrupted = false;
  const onInterrupt = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    if (!instance) process.stdout.write('huddle: quitting; a team already open is suspended first (Ctrl+C again leaves at once)\n');
    resolveQuit();
  };
  process.on('SIGINT', onInterrupt);

  let instance: Instance | undefined;
  let ready: { controller: ConsoleController; history: InputHistory } | undefined;
  const draw = async () => {
    const [{ render }, { App }] = await screen;
    const element = () => createElement(App, { store, ready, quit: resolveQuit });
    instance = render(element(), { alternateScreen: true, exitOnCtrlC: false, interactive: true, incrementalRendering: true, maxFps: 30 });
    return () => instance?.rerender(element());
  };
  const restoreTerminal = () => {
    try {
      instance?.unmount();
    } catch {
      // Already gone.
    }
    instance = undefined;
    // Belt and braces: leave the alternate screen, show the cursor, end bracketed paste.
    process.stdout.write('\x1b[?2004l\x1b[?25h\x1b[?1049l');
  };

  let redraw = early ? await draw() : undefined;
  // V8 grows its young generation with the allocation rate, up to semi-spaces of 64 MB, which a
  // team streaming into the screen reaches (tens of MB resident for garbage): it stays at the
  // size start-up gave it. (Set after the first frame, so start-up's own collections are few; node:v8
  // itself loads after it too.)
  const { default: v8 } = await import('node:v8');
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  // bubblewrap's probe runs in child processes while the session core loads (settings read its verdict).
  const probing = probeSandbox();
  const markdownLoaded = early ? markdown() : undefined;
  const loading = core ?? import('./console-session.js');
  const progress: OpeningProgress = { stopping: false };
  const opening = (async () => {
    const { openConsoleSession, askAboutOldTeam } = await loading;
    await Promise.all([probing, markdownLoaded]);
    return openConsoleSession(
      options,
      store,
      async (members) => {
        // Only a team kept elsewhere (PostgreSQL) gets here with the screen drawn: the question is asked on the normal screen.
        if (instance) restoreTerminal();
        redraw = undefined;
        return askAboutOldTeam(members);
      },
      progress,
    );
  })();
  let opened: ConsoleSession | 'quit';
  try {
    // Quitting (Ctrl+C, SIGTERM, SIGHUP) while the team still opens does not wait for it to open: a start that
    // hangs (a database that does not answer) can be left. Once open, it is suspended (below).
    opened = await Promise.race([opening, quitRequested.then(() => 'quit' as const)]);
  } catch (error) {
    if (instance) restoreTerminal();
    const { StartupError } = await loading;
    if (error instanceof StartupError) return fail(error.message);
    throw error;
  }
  if (opened === 'quit') {
    progress.stopping = true;
    // Open already, its teammates maybe resuming and running: once that is done the team is suspended, to be
    // resumed later, not cut off mid-call. A start that hangs (a database that does not answer) is left after a
    // bound, and whatever it still does ends with the process.
    if (progress.session) {
      const settled = await Promise.race([
        opening.then(
          () => true,
          () => true,
        ),
        delay(LATE_OPEN_MS, false),
      ]);
      // A close that fails leaves the team as a crash would: resumable, its lock a dead process's; the process exits next.
      if (settled) await progress.session.close({ reason: 'the console was closed while it opened', resumable: true }).catch(() => undefined);
    }
    // Left behind: whatever the open still does (or fails with) ends with the process.
    opening.catch(() => undefined);
    if (instance) restoreTerminal();
    return 0;
  }
  // From the first frame on Ctrl+C is a key (the screen's raw mode); a SIGINT after the console closed ends it at once.
  process.off('SIGINT', onInterrupt);
  const session = opened;
  const { consoleController, startConsoleSession, closeConsoleSession } = await loading;
  ready = consoleController(session.session, store, resolveQuit);
  if (redraw) redraw();
  else await draw();

  const onCrash = (error: unknown) => {
    restoreTerminal();
    process.stderr.write(`huddle crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);

  // Highlighting costs ~100 ms to load: after the first frame, not before it.
  void import('./render/markdown.js').then(({ preloadHighlighter }) => preloadHighlighter()).then(() => store.setState({ highlighterReady: true }));

  const stopAttention = await startConsoleSession(session, ready.controller, options.backlog);
  await quitRequested;
  stopAttention();
  restoreTerminal();
  await closeConsoleSession(session, ready.controller);
  return 0;
}

/**
 * Whether the first frame can come before the session: a person at a terminal starting a new team
 * here, so that no question about an old one (asked on the normal screen) can come first.
 */
function drawsFirst(options: CliOptions): boolean {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return false;
  if (options.command === 'demo' || options.resume) return false;
  return !teamDirAbove(path.resolve(options.cwd ?? process.cwd()));
}

/** A `.team` directory in `dir` or above it: a team may be left there (the workspace is the repository's root). */
function teamDirAbove(dir: string): boolean {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, '.team'))) return true;
    if (path.dirname(at) === at) return false;
  }
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
