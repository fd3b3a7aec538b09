// `huddle` (and `huddle demo`): the full-screen console over the same Team that headless runs.
import { createInterface } from 'node:readline/promises';
import { existsSync, statSync } from 'node:fs';
import { createElement } from 'react';
import type { CliOptions } from '../cli.js';
import { Team } from '../agents/team.js';
import { LEAD_NAME } from '../runtime/vocabulary.js';
import { ConfigError, MISSING_KEY_MESSAGE, hasCredentials, resolveConfig, type HuddleConfig } from '../runtime/config.js';
import { fileBackend } from '../runtime/store/file/file-store.js';
import { EventHub } from '../runtime/events/events.js';
import { ModelClient, ModelError, modelClientOptions, type ModelBackend } from '../runtime/model/model-client.js';
import { StoreError, type StoreBackend, type TeamStore } from '../runtime/store/team-store.js';
import { Workspace } from '../runtime/workspace/workspace.js';
import { ConsoleController } from './console-controller.js';
import { EventBridge } from './state/event-bridge.js';
import { createConsoleStore } from './state/console-store.js';
import { InputHistory } from './state/input-history.js';

const DEMO_PROMPT = 'Build a tiny greeting library with tests.';

/** Without a key the console still opens; every model call says what to set. */
class NoKeyBackend implements ModelBackend {
  async call(): Promise<never> {
    throw new ModelError(MISSING_KEY_MESSAGE.replace(/^huddle: /, ''), undefined);
  }
}

export async function runConsole(options: CliOptions): Promise<number> {
  const demo = options.command === 'demo';
  let config: HuddleConfig;
  let cleanupDemo: (() => Promise<void>) | undefined;
  try {
    let cwd = options.cwd;
    if (demo) {
      const { createDemoWorkspace } = await import('../agents/demo/demo-workspace.js');
      const workspace = await createDemoWorkspace();
      cwd = workspace.dir;
      cleanupDemo = workspace.cleanup;
    }
    config = resolveConfig({ cwd, model: options.model, apiKeyFile: options.apiKeyFile, maxTurns: options.maxTurns, permissionMode: options.permissionMode });
    config.budget = options.budget; // --budget-* flags: the team's limits (runtime/budget.ts)
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }
  if (!existsSync(config.cwd) || !statSync(config.cwd).isDirectory()) return fail(`workspace ${config.cwd} is not a directory`);
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    return fail('the console needs a terminal; for scripts and CI use huddle -p "PROMPT"');
  }

  const workspace = new Workspace(config.cwd);
  const teamBackend = fileBackend(workspace);
  let decision: Awaited<ReturnType<typeof decideAboutOldTeam>>;
  try {
    decision = await decideAboutOldTeam(teamBackend, options);
    if (decision === 'quit') return 0;
    if (decision === 'fresh') await teamBackend.archive();
  } catch (error) {
    // Another live huddle here, or the state cannot be read: one line, exit 2.
    if (error instanceof StoreError) return fail(error.message);
    throw error;
  }

  const keyMissing = !demo && !hasCredentials(config);
  let backend: ModelBackend;
  if (demo) {
    const { ScriptedDemoBackend, DEFAULT_DEMO_PACE, DEFAULT_THINK_MS } = await import('../agents/demo/scripted-backend.js');
    // HUDDLE_DEMO_SPEED=10 plays the demo ten times faster (for tests and the impatient).
    const speed = Math.max(1, Number(process.env.HUDDLE_DEMO_SPEED) || 1);
    backend = new ScriptedDemoBackend({
      pace: { charsPerChunk: DEFAULT_DEMO_PACE.charsPerChunk * speed, chunkDelayMs: DEFAULT_DEMO_PACE.chunkDelayMs },
      thinkMs: DEFAULT_THINK_MS / speed,
    });
    config.model = 'huddle-demo';
    // The scripted team runs its tests with bash in a throwaway directory: no questions, unless asked for.
    config.permissionMode ??= 'auto';
  } else {
    backend = keyMissing ? new NoKeyBackend() : new ModelClient(modelClientOptions(config));
  }

  const hub = new EventHub();
  let teamStore: TeamStore;
  try {
    teamStore = await teamBackend.open({ hub, secrets: [config.apiKey, config.authToken].filter((s): s is string => Boolean(s)) });
  } catch (error) {
    if (error instanceof StoreError) return fail(error.message);
    throw error;
  }
  const team = await Team.open({ config, workspace, hub, store: teamStore, backend });
  const store = createConsoleStore({
    model: config.model,
    endpoint: demo ? 'built-in script' : config.baseURL ? new URL(config.baseURL).host : '',
    demo,
    keyMissing,
  });
  const bridge = new EventBridge(hub, store);
  // After the bridge subscribes, so the panes see the resumed agents' status events.
  if (decision === 'resume') await team.resumeMembers();
  const history = InputHistory.forTeamDir(workspace.teamDir);

  const { render } = await import('ink');
  const { App } = await import('./components/App.js');
  let resolveQuit!: () => void;
  const quitRequested = new Promise<void>((resolve) => (resolveQuit = resolve));
  const controller = new ConsoleController(team, store, resolveQuit);
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
  void import('./render/markdown.js')
    .then(({ preloadHighlighter }) => preloadHighlighter())
    .then(() => store.setState({ highlighterReady: true }));

  team.start();
  if (demo) team.lead.prompt(DEMO_PROMPT);

  await quitRequested;
  restoreTerminal();
  bridge.close();
  controller.close();
  const reason = 'the console was closed';
  await team.stopAll(reason);
  await team.ctx.roster.setStatus(LEAD_NAME, 'shutdown', { reason });
  await team.close(reason);
  await teamStore.close(reason);
  if (demo) {
    process.stdout.write(`huddle demo: the files the team wrote are in ${workspace.root}\n`);
  } else if (cleanupDemo) {
    await cleanupDemo();
  }
  return 0;
}

/** An unfinished team in the workspace: the flags decide, or the person is asked. */
async function decideAboutOldTeam(teamBackend: StoreBackend, options: CliOptions): Promise<'new' | 'resume' | 'fresh' | 'quit'> {
  if (options.fresh) return 'fresh';
  const unfinished = await teamBackend.unfinishedMembers();
  if (unfinished.length === 0) return 'new';
  if (options.resume) return 'resume';
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      const answer = (
        await prompt.question(`This workspace holds an unfinished team (${unfinished.join(', ')}). [r]esume it, start [f]resh (the old one is archived), or [q]uit? `)
      )
        .trim()
        .toLowerCase();
      if (answer.startsWith('r')) return 'resume';
      if (answer.startsWith('f')) return 'fresh';
      if (answer.startsWith('q')) return 'quit';
    }
  } finally {
    prompt.close();
  }
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
