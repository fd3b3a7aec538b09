// The embedded backend: a team in the workspace's files (docs/contract.md#on-disk), `.team/` and `.tasks/`.
// Opening it takes the team lock (team-lock.ts) and checks that the state can be written and
// read, so a read-only workspace, a full disk or a broken cursor is one clear line at start.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MalformedFileError } from '../../fs/atomic-file.js';
import type { Workspace } from '../../workspace/workspace.js';
import { makeDirectory, StoreError, StoreUnavailableError, StoreWriteError } from '../store-errors.js';
import { type OpenStoreOptions, type StoreBackend, TeamBusyError, type TeamStore } from '../team-store.js';
import { ApprovalQueue } from '../memory-approvals.js';
import { FileBoard } from './board/file-board.js';
import { EventLog } from './event-log.js';
import { SettingsAllowList } from '../../settings/settings-allow-list.js';
import { FileBus } from './file-bus.js';
import { FileRoster } from './file-roster.js';
import { FileSpendLedger } from './spend-ledger.js';
import { acquireTeamLock, refuseIfBusy } from './team-lock.js';
import { archiveTeam, unfinishedMembers } from './team-state.js';
import { ensureTeamGitignore } from '../../workspace/team-gitignore.js';
import { PRIVATE_FILE_MODE } from '../../fs/private-modes.js';
import { makeTeamDirPrivate } from '../../workspace/team-privacy.js';

export function fileBackend(workspace: Workspace): StoreBackend {
  const where = describe(workspace);
  return {
    describe: () => where,
    unfinishedMembers: async () => {
      refuseIfBusy(workspace.teamDir, where);
      return unavailableOnError(where, () => unfinishedMembers(workspace.teamDir));
    },
    archive: async () => {
      refuseIfBusy(workspace.teamDir, where);
      return unavailableOnError(where, () => archiveTeam(workspace.teamDir, workspace.tasksDir));
    },
    open: (options) => openFileStore(workspace, options),
  };
}

function describe(workspace: Workspace): string {
  return `${path.relative(workspace.root, workspace.teamDir) || '.team'}/ in ${workspace.root}`;
}

export async function openFileStore(workspace: Workspace, { hub, secrets, mode = 'run' }: OpenStoreOptions): Promise<TeamStore> {
  const where = describe(workspace);
  makeTeamDirPrivate(workspace.teamDir); // an older tree, left 0644, is the person's alone from now on
  const release = await unavailableOnError(where, () => (mode === 'run' ? acquireTeamLock(workspace.teamDir, where) : () => undefined));
  try {
    return await unavailableOnError(where, () => openStores(workspace, { hub, secrets }, release));
  } catch (error) {
    release();
    throw error;
  }
}

async function openStores(workspace: Workspace, { hub, secrets }: OpenStoreOptions, release: () => void): Promise<TeamStore> {
  probeWritable(workspace.teamDir);
  probeWritable(workspace.tasksDir);
  const failureListeners = new Set<(error: StoreError) => void>();
  let failure: StoreError | undefined;
  const fail = (error: StoreError): void => {
    if (failure) return;
    failure = new StoreWriteError(`${error.message}; the team's state can no longer be kept, so the run stops (once fixed, huddle --resume goes on from here)`);
    // Said where people look (the console, headless stderr); the failing record itself may not take it.
    hub.emit('huddle', 'warning', { message: failure.message, store_failure: true });
    for (const listener of [...failureListeners]) listener(failure);
  };
  const events = new EventLog(hub, path.join(workspace.teamDir, 'logs'), { secrets, root: workspace.root, onFailure: fail });
  const roster = await FileRoster.open(workspace.teamDir, { teamName: path.basename(workspace.root), events: hub });
  const bus = new FileBus(path.join(workspace.teamDir, 'inbox'), { knownNames: () => roster.names(), events: hub });
  const broken = bus.brokenCursor();
  if (broken) {
    bus.close();
    events.close();
    throw new StoreUnavailableError(broken.message);
  }
  const board = new FileBoard(workspace.tasksDir, { events: hub });
  const spend = new FileSpendLedger({ teamDir: workspace.teamDir, board, hub, onFailure: fail });
  const approvals = new ApprovalQueue(hub);
  // The ask-mode allow-list is a setting: every settings file and the old .team/allow.json.
  const allowList = new SettingsAllowList({ cwd: workspace.root });
  ensureTeamGitignore(workspace.teamDir);
  let closed = false;
  return {
    teamName: roster.teamName,
    bus,
    board,
    roster,
    spend,
    approvals,
    allowList,
    events,
    get failure() {
      return failure;
    },
    onFailure(listener) {
      failureListeners.add(listener);
      return () => failureListeners.delete(listener);
    },
    async close(reason = 'huddle closed') {
      if (closed) return;
      closed = true;
      approvals.close(reason); // nothing may wait on a person who is gone
      board.close();
      bus.close();
      roster.close();
      await spend.close();
      events.close();
      release();
    },
  };
}

/** Creates `dir` if needed and proves a file can be written in it (a read-only or full disk says so now, not mid-run). */
function probeWritable(dir: string): void {
  const probe = path.join(dir, `.probe-${process.pid}.tmp`);
  makeDirectory(dir);
  try {
    writeFileSync(probe, 'huddle checks that its state can be written here\n', { mode: PRIVATE_FILE_MODE });
  } catch (error) {
    throw StoreWriteError.from(error, dir);
  } finally {
    rmSync(probe, { force: true });
  }
}

/** Runs `work`; what goes wrong becomes one line naming the place and why (StoreError passes through). */
async function unavailableOnError<T>(where: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StoreUnavailableError || error instanceof TeamBusyError || !(error instanceof Error)) throw error;
    if (error instanceof StoreError) {
      throw new StoreUnavailableError(`cannot open the team (${where}): ${error.message}`);
    }
    if (error instanceof MalformedFileError) throw new StoreUnavailableError(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    if (code)
      throw new StoreUnavailableError(
        `cannot open the team (${where}): ${StoreWriteError.from(error, (error as NodeJS.ErrnoException).path ?? where).message}`,
      );
    throw error;
  }
}
