// Liveness across processes (docs/contract.md#command-line, HUDDLE_LEASE_MS): a host that stops renewing its
// lease loses its teammates — marked failed with the reason, their tasks back on the board, the
// lead told (once) — and when it comes back, whatever it writes is refused (fencing).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { when } from '../contract/harness.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';
import { bundlePgFixture, runFixture } from './fixtures/bundle.js';

const LEASE_MS = 2_000;

describePostgres('host leases', (base) => {
  let root: string;
  const stores: TeamStore[] = [];
  let memberChild: ChildProcess | undefined;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-lease-'));
  });
  afterAll(async () => {
    // A failure may leave the member stopped (SIGSTOP): it is woken, then killed.
    if (memberChild && memberChild.exitCode === null && memberChild.signalCode === null) {
      memberChild.kill('SIGCONT');
      memberChild.kill('SIGKILL');
    }
    for (const store of stores) await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a host that stops renewing loses its teammates to the lead, and its later writes are refused', { timeout: 60_000 }, async () => {
    const { url } = teamUrl(base, 'lease');
    const lead = await postgresBackend(url, new Workspace(root), { leaseMs: LEASE_MS }).open({ hub: new EventHub(), secrets: [] });
    stores.push(lead);
    await lead.board.create({ subject: 'the parser' }, 'lead');
    await lead.board.create({ subject: 'the printer' }, 'lead');

    const file = await bundlePgFixture('pg-member');
    const lines: Array<Record<string, string | boolean>> = [];
    let heard: () => void = () => undefined;
    const member = runFixture(file, { url, cwd: root, leaseMs: LEASE_MS, name: 'zed', claim: true }, (line) => {
      lines.push(JSON.parse(line) as Record<string, string | boolean>);
      heard();
    });
    memberChild = member.child;
    /** The next line the fixture prints. */
    const next = () =>
      new Promise<Record<string, string | boolean>>((resolve) => {
        const check = () => {
          const line = lines.shift();
          if (line) resolve(line);
        };
        heard = check;
        check();
      });
    // What the other process did reaches this one by itself: the member (NOTIFY), its claim (its task event, mirrored here).
    const changed: number[] = [];
    lead.board.onChange((change) => changed.push(...(change.source === 'external' ? change.ids : [change.task.id])));
    const host = (await next()).ready as string;
    await when(
      (check) => lead.roster.onChange(check),
      () => lead.roster.get('zed'),
    );
    expect(lead.roster.get('zed')).toMatchObject({ host, status: 'working' });
    await when(
      (check) => lead.board.onChange(check),
      () => (changed.includes(1) ? true : undefined),
    );
    expect(await lead.board.get(1)).toMatchObject({ owner: 'zed', status: 'in_progress' });

    // The process stops (a pause, a cut): its lease lapses, and the lead's process hands over its work.
    member.child.kill('SIGSTOP');
    await when(
      (check) => lead.roster.onChange(check),
      () => (lead.roster.get('zed')?.status === 'failed' ? true : undefined),
    );
    expect(lead.roster.get('zed')!.error).toMatch(/stopped renewing its lease/);
    expect(await lead.board.get(1)).toMatchObject({ owner: null, status: 'pending' });
    const told = (await lead.bus.history('lead')).filter((m) => m.from === 'huddle');
    expect(told).toHaveLength(1);
    expect(told[0]!.content).toMatch(/^\[huddle\] zed failed: its host .* stopped renewing its lease .*; its task #1 went back on the board$/);

    // It comes back: what it writes is refused, and nothing changes.
    member.child.kill('SIGCONT');
    member.child.stdin!.write('write\n');
    const reply = await next();
    expect(reply).toMatchObject({ refused: expect.stringMatching(/lost its lease/) });
    await lead.roster.refresh();
    expect(lead.roster.get('zed')).toMatchObject({ status: 'failed' });
    member.child.stdin!.end();
    await member.exited;
  });
});
