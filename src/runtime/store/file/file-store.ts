// The embedded backend: a team in the workspace's files (SPEC section 2), `.team/` and `.tasks/`.
import path from 'node:path';
import type { Workspace } from '../../workspace/workspace.js';
import type { OpenStoreOptions, StoreBackend, TeamStore } from '../team-store.js';
import { ApprovalQueue } from '../memory-approvals.js';
import { EventLog } from './event-log.js';
import { SettingsAllowList } from '../../settings/settings-allow-list.js';
import { FileBoard } from './file-board.js';
import { FileBus } from './file-bus.js';
import { FileRoster } from './file-roster.js';
import { FileSpendLedger } from './spend-ledger.js';
import { archiveTeam, unfinishedMembers } from './team-state.js';
import { ensureTeamGitignore } from './team-gitignore.js';

export function fileBackend(workspace: Workspace): StoreBackend {
  return {
    describe: () => `${path.relative(workspace.root, workspace.teamDir) || '.team'}/ in ${workspace.root}`,
    unfinishedMembers: async () => unfinishedMembers(workspace.teamDir),
    archive: async () => archiveTeam(workspace.teamDir, workspace.tasksDir),
    open: (options) => openFileStore(workspace, options),
  };
}

export async function openFileStore(workspace: Workspace, { hub, secrets }: OpenStoreOptions): Promise<TeamStore> {
  const events = new EventLog(hub, path.join(workspace.teamDir, 'logs'), { secrets });
  const roster = await FileRoster.open(workspace.teamDir, { teamName: path.basename(workspace.root), events: hub });
  const bus = new FileBus(path.join(workspace.teamDir, 'inbox'), { knownNames: () => roster.names(), events: hub });
  const board = new FileBoard(workspace.tasksDir, { events: hub });
  const spend = new FileSpendLedger({ teamDir: workspace.teamDir, board, hub });
  const approvals = new ApprovalQueue(hub);
  // The ask-mode allow-list is a setting: every settings file and the old .team/allow.json.
  const allowList = new SettingsAllowList({ cwd: workspace.root });
  ensureTeamGitignore(workspace.teamDir);
  return {
    teamName: roster.teamName,
    bus,
    board,
    roster,
    spend,
    approvals,
    allowList,
    events,
    async close(reason = 'huddle closed') {
      approvals.close(reason); // nothing may wait on a person who is gone
      board.close();
      bus.close();
      await spend.close();
      events.close();
    },
  };
}
