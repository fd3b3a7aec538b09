// The needs-you queue across hosts: a question a worker's teammate asks (ask mode) reaches the
// person at the lead's console, with the same id its event carries; the answer there reaches the
// asker; with no console attached anywhere it is refused at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { collect, when } from '../contract/harness.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

describePostgres('approvals across hosts', (base) => {
  let root: string;
  const stores: TeamStore[] = [];
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-approvals-'));
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("a worker's question is listed at the lead's console and answered there", async () => {
    const { url } = teamUrl(base, 'approvals');
    const backend = postgresBackend(url, new Workspace(root));
    const lead = await backend.open({ hub: new EventHub(), secrets: [] });
    const workerHub = new EventHub();
    const workerEvents = collect(workerHub);
    const worker = await backend.open({ hub: workerHub, secrets: [], mode: 'join' });
    stores.push(lead, worker);
    const ask = { agent: 'alice', tool: 'bash', summary: 'npm install', reason: 'not on the allow-list', prefixes: ['npm install'] };

    // Nobody can answer anywhere: refused at once.
    expect(await worker.approvals.request(ask)).toEqual({ kind: 'unanswerable' });

    const detach = lead.approvals.attachAnswerer();
    // The worker learns of the console through the database (the lead host's answerer count).
    await when(
      (check) => worker.approvals.onChange(check),
      () => (worker.approvals.answerable ? true : undefined),
    );

    const asked = worker.approvals.request(ask);
    const listed = await when(
      (check) => lead.approvals.onChange(check),
      () => lead.approvals.list().find((r) => r.summary === 'npm install'),
    );
    expect(listed).toMatchObject({ agent: 'alice', tool: 'bash', reason: 'not on the allow-list' });
    // The id is the one the worker's approval_requested event carries (the console keys its queue by it).
    expect(listed.id).toMatch(/-approval_1$/);
    expect(lead.approvals.resolve(listed.id, 'approve')).toBe(true);
    expect(await asked).toEqual({ kind: 'approved', always: false });
    expect(workerEvents.filter((e) => e.type === 'approval_resolved').map((e) => e.id)).toEqual([listed.id]);
    await when(
      (check) => lead.approvals.onChange(check),
      () => (lead.approvals.list().length === 0 ? true : undefined),
    );
    detach();
    await when(
      (check) => worker.approvals.onChange(check),
      () => (worker.approvals.answerable ? undefined : true),
    );
  });
});
