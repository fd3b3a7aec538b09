// The storage contract (test/store/contract/) on the file backend: a fresh workspace per team;
// the second instance is another store opened on the same workspace to work for the team (join).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileBackend } from '../../../../src/runtime/store/file/file-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { boardContract } from '../contract/board.contract.js';
import { busContract } from '../contract/bus.contract.js';
import { type ContractTeam, openContractTeam, type StoreFactory } from '../contract/harness.js';
import { inboxContract } from '../contract/inbox.contract.js';
import { rosterContract } from '../contract/roster.contract.js';
import { teamStateContract } from '../contract/team-state.contract.js';

const files: StoreFactory = {
  name: 'file backend',
  async fresh(): Promise<ContractTeam> {
    const root = mkdtempSync(path.join(tmpdir(), 'huddle-contract-'));
    return openContractTeam(fileBackend(new Workspace(root)), () => rmSync(root, { recursive: true, force: true }));
  },
};

busContract(files);
inboxContract(files);
boardContract(files);
rosterContract(files);
teamStateContract(files);
