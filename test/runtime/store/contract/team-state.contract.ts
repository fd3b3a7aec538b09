// The rest of a team's store: the spend ledger, the approvals queue, the allow-list, the event
// record, and the backend's view of a team left behind (unfinished members, archiving).
import { usageFields } from '../../../helpers/usage-event.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ContractTeam, SECRET, type StoreFactory } from './harness.js';

export function teamStateContract(factory: StoreFactory): void {
  describe(`SpendLedger (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
    });
    afterEach(() => team.dispose());

    it('attributes each usage to the task its agent has in progress, else to no task', async () => {
      const { store, hub } = team;
      await store.board.create({ subject: 'parser' }, 'lead');
      await store.board.claim(1, 'alice');
      hub.emit('alice', 'usage', usageFields(0.25, 100, 10));
      hub.emit('lead', 'usage', usageFields(0.5, 200, 20));
      // Counted per agent at once (a budget checks it before the next model call)...
      expect(store.spend.data.agents.alice).toMatchObject({ cost_usd: 0.25, model_calls: 1 });
      await store.spend.flush();
      // ...and per task once attributed.
      expect(store.spend.data.tasks['1']).toMatchObject({
        subject: 'parser',
        cost_usd: 0.25,
        model_calls: 1,
        input_tokens: 100,
        output_tokens: 10,
        agents: { alice: 0.25 },
      });
      expect(store.spend.data.unattributed).toMatchObject({ cost_usd: 0.5, model_calls: 1 });
      expect(store.spend.taskLines()).toEqual(['#1 parser: $0.2500 (1 calls; alice $0.2500)', 'no task: $0.5000 (1 calls)']);
    });

    it('counts the spend of every instance of the team in one tally', async () => {
      const other = await team.join();
      team.hub.emit('alice', 'usage', usageFields(0.1, 1, 1));
      other.hub.emit('bob', 'usage', usageFields(0.2, 1, 1));
      other.hub.emit('alice', 'usage', usageFields(0.3, 1, 1));
      await Promise.all([team.store.spend.flush(), other.store.spend.flush()]);
      for (const store of [team.store, other.store]) {
        expect(store.spend.data.agents.alice?.cost_usd).toBeCloseTo(0.4);
        expect(store.spend.data.agents.alice?.model_calls).toBe(2);
        expect(store.spend.data.agents.bob?.cost_usd).toBeCloseTo(0.2);
        expect(store.spend.data.unattributed.model_calls).toBe(3);
      }
    });
  });

  describe(`Approvals (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
    });
    afterEach(() => team.dispose());

    const ask = { agent: 'alice', tool: 'bash', summary: 'rm -rf build', reason: 'deletes files', prefixes: ['rm -rf build'] };

    it('refuses at once with nobody to answer; queues and resolves with an answerer', async () => {
      const { approvals } = team.store;
      expect(approvals.answerable).toBe(false);
      expect(await approvals.request(ask)).toEqual({ kind: 'unanswerable' });
      const detach = approvals.attachAnswerer();
      let changes = 0;
      approvals.onChange(() => changes++);
      const first = approvals.request(ask);
      const second = approvals.request({ ...ask, summary: 'git push' });
      expect(approvals.list().map((r) => r.summary)).toEqual(['rm -rf build', 'git push']);
      expect(approvals.size).toBe(2);
      expect(approvals.resolve(approvals.list()[0]!.id, 'always')).toBe(true);
      expect(await first).toEqual({ kind: 'approved', always: true });
      expect(approvals.resolve('no-such-id', 'approve')).toBe(false);
      detach(); // nobody left to answer: what waits is denied
      expect(await second).toEqual({ kind: 'denied' });
      expect(changes).toBe(4);
      expect(team.events.filter((e) => e.type === 'approval_requested')).toHaveLength(2);
      expect(team.events.filter((e) => e.type === 'approval_resolved').map((e) => e.decision)).toEqual(['always', 'deny']);
    });

    it('cancels a request whose agent is interrupted, and denies all on close', async () => {
      const { approvals } = team.store;
      approvals.attachAnswerer();
      const abort = new AbortController();
      const interrupted = approvals.request(ask, abort.signal);
      abort.abort();
      expect(await interrupted).toEqual({ kind: 'cancelled' });
      const pending = approvals.request(ask);
      approvals.close('bye');
      expect(await pending).toEqual({ kind: 'denied' });
      expect(await approvals.request(ask)).toEqual({ kind: 'unanswerable' });
    });
  });

  describe(`AllowList (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
    });
    afterEach(() => team.dispose());

    it('adds prefixes once, in order, and every instance reads them', async () => {
      const other = await team.join();
      expect(team.store.allowList.read()).toEqual({ entries: [] });
      expect(await team.store.allowList.add(['npm test', 'make'])).toEqual(['npm test', 'make']);
      expect(await other.store.allowList.add(['make', 'cargo build', ' '])).toEqual(['cargo build']);
      expect(team.store.allowList.read().entries).toEqual(['npm test', 'make', 'cargo build']);
      expect(other.store.allowList.read().entries).toEqual(['npm test', 'make', 'cargo build']);
    });
  });

  describe(`EventStore (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
    });
    afterEach(() => team.dispose());

    it('records every event of the hub per agent, in order, without secrets, readable by every instance', async () => {
      team.hub.emit('alice', 'text', { text: 'hello' });
      team.hub.emit('alice', 'tool_call', { id: 'toolu_1', name: 'bash', input: { command: `echo ${SECRET}` }, summary: 'bash' });
      team.hub.emit('lead', 'status', { status: 'working', role: 'lead' });
      const events = await team.store.events.read('alice');
      expect(events.map((e) => e.type)).toEqual(['text', 'tool_call']);
      expect(events[0]).toMatchObject({ agent: 'alice', text: 'hello' });
      expect(JSON.stringify(events)).not.toContain(SECRET);
      expect((await team.store.events.agents()).sort()).toEqual(['alice', 'lead']);
      const other = await team.join();
      other.hub.emit('alice', 'text', { text: 'from the other one' });
      expect((await other.store.events.read('alice')).map((e) => e.text)).toEqual(['hello', undefined, 'from the other one']);
      expect(await team.store.events.read('nobody')).toEqual([]);
    });

    it('keeps a transcript and gives it back by the location it returned, without secrets', async () => {
      const location = await team.store.events.saveTranscript('alice', { agent: 'alice', messages: [{ role: 'user', content: `key ${SECRET}` }] });
      expect(location).toContain('alice');
      const back = await team.store.events.readTranscript(location);
      expect(back).toMatchObject({ agent: 'alice', messages: [{ role: 'user', content: 'key [redacted]' }] });
      expect(await team.store.events.readTranscript('no/such/place')).toBeUndefined();
      expect(team.store.failure).toBeUndefined();
    });
  });

  describe(`StoreBackend (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
    });
    afterEach(() => team.dispose());

    it('says which members are unfinished; archives a closed team, after which the team starts anew', async () => {
      const { backend, store } = team;
      expect(backend.describe()).toEqual(expect.any(String));
      await store.roster.add({ name: 'alice', role: 'coder' });
      await store.board.create({ subject: 'left over' }, 'lead');
      expect(await backend.unfinishedMembers()).toEqual(['lead', 'alice']);
      await store.roster.setStatus('alice', 'shutdown');
      await store.roster.setStatus('lead', 'shutdown');
      expect(await backend.unfinishedMembers()).toEqual([]);
      await store.close();
      expect(await backend.archive()).toEqual(expect.any(String));
      const anew = await backend.open({ hub: team.hub, secrets: [SECRET] });
      try {
        expect(await anew.board.list()).toEqual([]);
        expect((await anew.board.create({ subject: 'first again' }, 'lead')).id).toBe(1);
        expect(anew.roster.names()).toEqual(['lead']);
      } finally {
        await anew.close();
      }
    });
  });
}
