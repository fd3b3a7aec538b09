// The storage contract (test/store/contract/) on the PostgreSQL backend: a fresh team (its own
// name in the shared test database) per test; the second instance is another store opened on the
// same team to work for it (join), as a worker host would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';
import { boardContract } from '../contract/board.contract.js';
import { busContract } from '../contract/bus.contract.js';
import { type ContractTeam, openContractTeam, type StoreFactory } from '../contract/harness.js';
import { inboxContract } from '../contract/inbox.contract.js';
import { rosterContract } from '../contract/roster.contract.js';
import { teamStateContract } from '../contract/team-state.contract.js';

describePostgres('PostgreSQL backend', (base) => {
  const postgres: StoreFactory = {
    name: 'PostgreSQL backend',
    async fresh(): Promise<ContractTeam> {
      const root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-contract-'));
      const { url } = teamUrl(base, 'contract');
      return openContractTeam(postgresBackend(url, new Workspace(root)), () => rmSync(root, { recursive: true, force: true }));
    },
  };

  busContract(postgres);
  inboxContract(postgres);
  boardContract(postgres);
  rosterContract(postgres);
  teamStateContract(postgres);
});
