// The Roster contract (docs/contract.md#roster): members, statuses and their reasons, refusals, and
// changes seen by every instance of the team.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RosterChange } from '../../../../src/runtime/store/roster.js';
import { type ContractTeam, type StoreFactory, when } from './harness.js';

export function rosterContract(factory: StoreFactory): void {
  describe(`Roster (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
    });
    afterEach(() => team.dispose());

    it('starts with the lead; adds members with validated names; refuses a live duplicate, replaces a gone one', async () => {
      const { roster } = team.store;
      expect(roster.lead).toBe('lead');
      expect(roster.names()).toEqual(['lead']);
      expect(roster.get('lead')).toMatchObject({ name: 'lead', role: 'lead', status: 'idle' });
      expect(typeof roster.teamName).toBe('string');
      const alice = await roster.add({ name: 'alice', role: 'coder', model: 'm1', skills: ['ts'] });
      expect(alice).toMatchObject({ name: 'alice', role: 'coder', status: 'working', model: 'm1', skills: ['ts'] });
      for (const bad of ['Alice', '1bob', 'bob smith', '', 'a'.repeat(33), '../x']) {
        await expect(roster.add({ name: bad, role: 'coder' })).rejects.toThrow(/invalid agent name/);
      }
      // The person's and huddle's sender names: a member named so would speak as them.
      for (const reserved of ['user', 'huddle']) await expect(roster.add({ name: reserved, role: 'coder' })).rejects.toThrow(`'${reserved}' is reserved`);
      await expect(roster.add({ name: 'alice', role: 'tester' })).rejects.toThrow("a teammate named 'alice' already exists (status: working)");
      await roster.setStatus('alice', 'failed', { error: 'model refused' });
      const back = await roster.add({ name: 'alice', role: 'tester' });
      expect(back).toMatchObject({ role: 'tester', status: 'working' });
      expect(back.error).toBeUndefined();
      expect(roster.names()).toEqual(['lead', 'alice']);
      expect(roster.members().map((m) => m.name)).toEqual(['lead', 'alice']);
    });

    it('keeps status reasons, errors and the task; announces each status change', async () => {
      const { roster } = team.store;
      const changes: RosterChange[] = [];
      roster.onChange((change) => changes.push(change));
      await roster.add({ name: 'bob', role: 'coder' });
      await roster.setStatus('bob', 'waiting', { reason: 'plan approval', task: 3 });
      expect(roster.get('bob')).toMatchObject({ status: 'waiting', status_reason: 'plan approval', task: 3 });
      await roster.setStatus('bob', 'failed', { error: 'API 500' });
      expect(roster.get('bob')).toMatchObject({ status: 'failed', error: 'API 500' });
      expect(roster.get('bob')!.status_reason).toBeUndefined();
      await roster.update('bob', { tokens: 1200 });
      expect(roster.get('bob')).toMatchObject({ tokens: 1200, status: 'failed' });
      await expect(roster.setStatus('nobody', 'idle')).rejects.toThrow("no teammate named 'nobody'; known names: lead, bob");
      await expect(roster.setStatus('bob', 'sleeping' as never)).rejects.toThrow(/invalid status 'sleeping'/);
      expect(changes.map((c) => c.kind)).toEqual(['add', 'status', 'status', 'update']);
      expect(team.events.filter((e) => e.type === 'status').map((e) => [e.agent, e.status])).toEqual([
        ['bob', 'working'],
        ['bob', 'waiting'],
        ['bob', 'failed'],
      ]);
    });

    it('changes through one instance reach the other, and its listeners', async () => {
      const other = await team.join();
      const seen: RosterChange[] = [];
      team.store.roster.onChange((change) => seen.push(change));
      await other.store.roster.add({ name: 'carol', role: 'reviewer' });
      await when(
        (check) => team.store.roster.onChange(check),
        () => (seen.length > 0 && team.store.roster.get('carol') ? true : undefined),
      );
      expect(team.store.roster.names()).toEqual(['lead', 'carol']);
      await team.store.roster.setStatus('carol', 'idle', { reason: 'done' });
      expect(other.store.roster.get('carol')).toMatchObject({ status: 'idle', status_reason: 'done' });
      // Two instances changing at once lose nothing.
      await Promise.all([
        ...Array.from({ length: 5 }, (_, i) => team.store.roster.add({ name: `p${i}`, role: 'coder' })),
        ...Array.from({ length: 5 }, (_, i) => other.store.roster.add({ name: `q${i}`, role: 'coder' })),
      ]);
      await other.store.roster.refresh();
      expect(other.store.roster.names()).toHaveLength(12);
    });
  });
}
