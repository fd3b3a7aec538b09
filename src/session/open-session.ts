// Opening a team session from its settings: what to do with a team left in the workspace (resume
// it, archive it, refuse, or ask), the team's stores (where another live huddle refuses us:
// TeamBusyError), then the team. Every face opens its session here; none wires stores and agents.
import path from 'node:path';
import { Team } from '../agents/lifecycle/team.js';
import { EventHub, type EventListener } from '../runtime/events/events.js';
import { StoreError, type TeamStore } from '../runtime/store/team-store.js';
import { budgetSettingsFrom } from '../runtime/settings/to-config.js';
import { startExtras, type SessionExtras } from './session-extras.js';
import { gitBaseline } from '../runtime/record/git-changes.js';
import { plantedLine, quarantineBeforeStart, snapshotGitMetadata } from '../runtime/git/planted-git.js';
import { RunRecorder } from '../runtime/record/run-record.js';
import { StartupError, type SessionSettings } from './settings.js';
import { TeamSession } from './team-session.js';

/** An unfinished team in the workspace (docs/contract.md#command-line): what the face's flags say, or the person's answer. */
export type UnfinishedTeamPolicy =
  | 'resume'
  | 'fresh'
  /** Neither --resume nor --fresh, nobody to ask (headless): exit 2 naming both. */
  | 'refuse'
  | ((members: string[]) => Promise<'resume' | 'fresh' | 'quit'>);

export interface OpenOptions {
  /** --fresh archives whatever team is there, finished or not. */
  fresh?: boolean;
  /** --resume: bring the team left in the workspace back (its lead's conversation, and every member not shut down). */
  resume?: boolean;
  /** When neither flag decides and an unfinished team is there. */
  unfinished: UnfinishedTeamPolicy;
  /** Subscribed before anything is opened, so it sees every event (the console's bridge, headless output). */
  observe?: EventListener;
  /**
   * A worker host (`huddle worker`): join the team another process runs, without a hold on it and
   * without asking about an unfinished team (it is the lead's).
   */
  join?: boolean;
  /** A shorter grace period (tests). */
  team?: { shutdownGraceMs?: number };
}

/**
 * Opens the session: resolves `'quit'` when the person chose to quit instead, throws StartupError
 * (one line, exit 2) when the team cannot be opened here.
 */
export async function openSession(settings: SessionSettings, options: OpenOptions): Promise<TeamSession | 'quit'> {
  const { backend, config, workspace } = settings;
  try {
    const decision = await decide(settings, options);
    if (decision === 'quit') return 'quit';
    const archived = decision === 'fresh' ? await backend.archive() : undefined;
    const hub = new EventHub();
    if (options.observe) hub.subscribe(options.observe);
    // The run record sums every event from the first; git says where the run began.
    const recorder = new RunRecorder();
    hub.subscribe(recorder.onEvent);
    // Before any agent runs: the repository is pinned (huddle's git follows no commondir planted
    // later) and its git metadata noted (what is new at the end was planted).
    const gitMetadata = snapshotGitMetadata(workspace.root);
    const plantedBefore = gitMetadata ? quarantineBeforeStart(gitMetadata, workspace.teamDir) : [];
    const gitBase = gitBaseline(workspace.root);
    const store = await backend.open({ hub, secrets: settings.secrets, mode: options.join ? 'join' : 'run' });
    let team: Team;
    let extras: SessionExtras | undefined;
    try {
      extras = await startExtras({ loaded: settings.loaded, root: workspace.root, home: settings.home, spawn: settings.spawn });
      const loaded = settings.loaded;
      team = await Team.open({
        config,
        workspace,
        hub,
        store,
        backend: settings.model,
        ...options.team,
        ...(loaded ? { settings: loaded.settings, budget: budgetSettingsFrom(loaded.settings) } : {}),
        memory: extras.memory,
        ...(extras.hooks ? { hooks: extras.hooks } : {}),
        ...(extras.mcp ? { mcp: extras.mcp } : {}),
        ...(settings.spawn ? { spawn: settings.spawn } : {}),
      });
    } catch (error) {
      await extras?.mcp?.close();
      await store.close('huddle could not start');
      throw error;
    }
    // Logged (and shown by the faces): deprecated files, servers that did not start, what the repository runs.
    extras.notices.push(...plantedBefore.map(plantedLine));
    for (const message of extras.notices) hub.emit('huddle', 'warning', { message });
    await team.sessionHook({ hook_event_name: 'SessionStart', source: decision === 'resume' ? 'resume' : 'startup' });
    return new TeamSession({
      team,
      store: store as TeamStore,
      hub,
      workspace,
      config,
      secrets: settings.secrets,
      decision,
      // A database names an archived team in words, not as a path.
      archived: archived && (path.isAbsolute(archived) ? workspace.relative(archived) : archived),
      loaded: settings.loaded,
      notices: extras.notices,
      ...(extras.mcp ? { mcp: extras.mcp } : {}),
      recorder,
      gitBase,
      gitMetadata,
    });
  } catch (error) {
    // Another live huddle here, a read-only workspace, a full disk, a broken state file: one line, exit 2.
    if (error instanceof StoreError) throw new StartupError(error.message);
    throw error;
  }
}

async function decide(settings: SessionSettings, options: OpenOptions): Promise<'new' | 'resume' | 'fresh' | 'quit'> {
  if (options.join) return 'new';
  if (options.fresh) return 'fresh';
  if (options.resume) return 'resume';
  let unfinished: string[];
  try {
    unfinished = await settings.backend.unfinishedMembers();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    // A roster that cannot be read: say which file and why, and touch nothing.
    throw new StartupError((error as Error).message);
  }
  if (unfinished.length === 0) return 'new';
  const policy = options.unfinished;
  if (policy === 'refuse') {
    throw new StartupError(
      `this workspace holds an unfinished team (${unfinished.join(', ')}); ` +
        'pass --resume to continue it or --fresh to start a new team (the old state is archived)',
    );
  }
  if (policy === 'resume' || policy === 'fresh') return policy;
  return policy(unfinished);
}
