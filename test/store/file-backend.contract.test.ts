// The storage contract (test/store/contract/) on the file backend: a fresh workspace per team;
// the second instance is another store opened on the same workspace to work for the team (join).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EventHub } from '../../src/runtime/events/events.js';
import { fileBackend } from '../../src/runtime/store/file/file-store.js';
import type { TeamStore } from '../../src/runtime/store/team-store.js';
import { Workspace } from '../../src/runtime/workspace/workspace.js';
import { boardContract } from './contract/board.contract.js';
import { busContract } from './contract/bus.contract.js';
import { collect, type ContractTeam, type Instance, SECRET, type StoreFactory } from './contract/harness.js';
import { rosterContract } from './contract/roster.contract.js';
import { teamStateContract } from './contract/team-state.contract.js';

const files: StoreFactory = {
  name: 'file backend',
  async fresh(): Promise<ContractTeam> {
    const root = mkdtempSync(path.join(tmpdir(), 'huddle-contract-'));
    const backend = fileBackend(new Workspace(root));
    const opened: TeamStore[] = [];
    const open = async (mode: 'run' | 'join'): Promise<Instance> => {
      const hub = new EventHub();
      const events = collect(hub);
      const store = await backend.open({ hub, secrets: [SECRET], mode });
      opened.push(store);
      return { store, hub, events };
    };
    const first = await open('run');
    return {
      ...first,
      backend,
      join: () => open('join'),
      async dispose() {
        for (const store of opened) await store.close();
        rmSync(root, { recursive: true, force: true });
      },
    };
  },
};

busContract(files);
boardContract(files);
rosterContract(files);
teamStateContract(files);
