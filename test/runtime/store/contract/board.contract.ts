// The Board contract (docs/contract.md#tasks): ids, atomic claims across instances, dependencies both
// ways, cycles refused with their path, completion unblocking, review claims, release, and
// change notifications across instances.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BoardChange, type Task, TaskBoardError } from '../../../../src/runtime/store/board.js';
import { type ContractTeam, type StoreFactory, when } from './harness.js';

export function boardContract(factory: StoreFactory): void {
  describe(`Board (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
    });
    afterEach(() => team.dispose());

    const board = () => team.store.board;

    it('numbers tasks from 1 on a fresh board, never twice, also when two instances create at once', async () => {
      const other = await team.join();
      const first = await board().create({ subject: 'Set up', description: 'the repo' }, 'lead');
      expect(first).toMatchObject({ id: 1, subject: 'Set up', description: 'the repo', status: 'pending', owner: null, blockedBy: [], blocks: [] });
      expect(Number.isNaN(Date.parse(first.created_at))).toBe(false);
      const made = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? board() : other.store.board).create({ subject: `t${i}` }, i % 2 ? 'lead' : 'alice')),
      );
      expect(made.map((t) => t.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
      expect((await other.store.board.list()).map((t) => t.id)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      await expect(board().create({ subject: '   ' }, 'lead')).rejects.toThrow(/needs a subject/);
      expect(team.events.filter((e) => e.type === 'task' && e.action === 'created')[0]).toMatchObject({ agent: 'lead', task: { id: 1 } });
    });

    it('refuses unknown ids, naming the existing ones', async () => {
      await expect(board().get(1)).rejects.toThrow('no task #1; the board is empty');
      for (const s of ['a', 'b', 'c']) await board().create({ subject: s }, 'lead');
      await expect(board().get(9)).rejects.toThrow(TaskBoardError);
      await expect(board().get(9)).rejects.toThrow('no task #9; existing tasks: 1, 2, 3');
      await expect(board().create({ subject: 'x', blockedBy: [9] }, 'lead')).rejects.toThrow('no task #9; existing tasks: 1, 2, 3');
      await expect(board().update(1, { addBlocks: [9] }, 'lead')).rejects.toThrow('no task #9; existing tasks: 1, 2, 3');
      expect((await board().list()).map((t) => t.id)).toEqual([1, 2, 3]);
    });

    it('claims are atomic across instances: 8 claimers on one task, one winner', async () => {
      const other = await team.join();
      await board().create({ subject: 'prize' }, 'lead');
      // The other instance learns a task is free without listing the board.
      expect(await other.store.board.hasClaimable()).toBe(true);
      const claimers = Array.from({ length: 8 }, (_, i) => `agent${i}`);
      const results = await Promise.allSettled(claimers.map((name, i) => (i % 2 ? board() : other.store.board).claim(1, name)));
      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [claimers[i]!] : []));
      expect(winners).toHaveLength(1);
      expect(await board().get(1)).toMatchObject({ status: 'in_progress', owner: winners[0] });
      for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toContain(`task #1 is already claimed by ${winners[0]}`);
      expect([await board().hasClaimable(), await other.store.board.hasClaimable()]).toEqual([false, false]);
    });

    it('claimNext drains a board across two instances, every task exactly once, first by id', async () => {
      const other = await team.join();
      const tasks = 60;
      for (let i = 1; i <= tasks; i++) await board().create({ subject: `task ${i}` }, 'lead');
      const claims: Array<{ id: number; owner: string }> = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const owner = `c${i}`;
          const mine = i % 2 ? board() : other.store.board;
          for (;;) {
            const task = await mine.claimNext(owner);
            if (!task) return;
            claims.push({ id: task.id, owner: task.owner! });
          }
        }),
      );
      const ids = claims.map((c) => c.id).sort((a, b) => a - b);
      expect(ids).toEqual(Array.from({ length: tasks }, (_, i) => i + 1));
      const stored = new Map((await board().list()).map((t): [number, Task] => [t.id, t]));
      for (const c of claims) expect(stored.get(c.id)).toMatchObject({ status: 'in_progress', owner: c.owner });
      expect(await board().claimable()).toEqual([]);
      expect(await other.store.board.claimNext('late')).toBeUndefined();
    });

    it('claimNext takes the first claimable by id, skips blocked tasks and those assigned to others', async () => {
      await board().create({ subject: 'a' }, 'lead');
      await board().create({ subject: 'b', blockedBy: [1] }, 'lead');
      await board().create({ subject: 'c' }, 'lead');
      await board().create({ subject: 'd' }, 'lead');
      await board().update(4, { owner: 'bob' }, 'lead');
      expect((await board().claimNext('alice'))?.id).toBe(1);
      expect((await board().claimNext('alice'))?.id).toBe(3);
      expect(await board().claimNext('alice')).toBeUndefined();
      expect(await board().claimNext('bob')).toMatchObject({ id: 4, owner: 'bob', status: 'in_progress' });
    });

    it('dependencies are written both ways, and a finished dependency is already met', async () => {
      for (const s of ['a', 'b', 'c', 'd']) await board().create({ subject: s }, 'lead');
      const e = await board().create({ subject: 'e', blockedBy: [1, 2] }, 'lead');
      expect(e.blockedBy).toEqual([1, 2]);
      expect((await board().get(1)).blocks).toEqual([5]);
      await board().update(3, { addBlockedBy: [1] }, 'lead');
      await board().update(3, { addBlocks: [4] }, 'lead');
      expect(await board().get(3)).toMatchObject({ blockedBy: [1], blocks: [4] });
      expect((await board().get(1)).blocks).toEqual([5, 3]);
      expect((await board().get(4)).blockedBy).toEqual([3]);
      await board().claim(2, 'alice');
      await board().update(2, { status: 'completed' }, 'alice');
      const after = await board().create({ subject: 'after', blockedBy: [2] }, 'lead');
      expect(after.blockedBy).toEqual([]);
      await expect(board().claim(4, 'bob')).rejects.toThrow('task #4 is blocked by #3 (pending)');
    });

    it('refuses a dependency that would close a loop, naming the loop, and changes nothing', async () => {
      for (const s of ['a', 'b', 'c']) await board().create({ subject: s }, 'lead');
      await board().update(3, { addBlockedBy: [1] }, 'lead');
      await expect(board().update(1, { addBlockedBy: [3] }, 'lead')).rejects.toThrow('would create a cycle: #1 → #3 → #1');
      await expect(board().update(3, { addBlocks: [1] }, 'lead')).rejects.toThrow('would create a cycle: #3 → #1 → #3');
      await board().update(2, { addBlockedBy: [3] }, 'lead');
      await expect(board().update(1, { addBlockedBy: [2] }, 'lead')).rejects.toThrow('would create a cycle: #1 → #3 → #2 → #1');
      await expect(board().update(2, { addBlockedBy: [2] }, 'lead')).rejects.toThrow('would create a cycle: #2 → #2');
      expect(await board().get(1)).toMatchObject({ blockedBy: [], blocks: [3] });
      expect((await board().scan()).cycles).toEqual([]);
    });

    it('completing a task unblocks its dependents, which become claimable', async () => {
      expect(await board().hasClaimable()).toBe(false);
      await board().create({ subject: 'base' }, 'lead');
      await board().create({ subject: 'left', blockedBy: [1] }, 'lead');
      await board().create({ subject: 'right', blockedBy: [1] }, 'lead');
      expect((await board().claimable()).map((t) => t.id)).toEqual([1]);
      expect(await board().hasClaimable()).toBe(true);
      await board().claim(1, 'alice');
      // The one free task is taken; the rest wait on it: nothing is claimable.
      expect(await board().hasClaimable()).toBe(false);
      await board().update(1, { status: 'completed' }, 'alice');
      expect((await board().get(2)).blockedBy).toEqual([]);
      expect((await board().get(3)).blockedBy).toEqual([]);
      expect((await board().claimable()).map((t) => t.id)).toEqual([2, 3]);
      expect(await board().hasClaimable()).toBe(true);
      await expect(board().update(1, { status: 'in_progress' }, 'alice')).rejects.toThrow(/completed tasks are final/);
    });

    it("hasClaimable(owner) also counts a pending task assigned to that owner once its blockers are done, never another's", async () => {
      await board().create({ subject: 'base' }, 'lead');
      await board().create({ subject: 'for bob', blockedBy: [1] }, 'lead');
      await board().update(2, { owner: 'bob' }, 'lead');
      await board().claim(1, 'alice');
      // #2 is bob's but waits on #1; nothing is free for anyone.
      expect([await board().hasClaimable(), await board().hasClaimable('bob'), await board().hasClaimable('carol')]).toEqual([false, false, false]);
      await board().update(1, { status: 'completed' }, 'alice');
      // Unblocked, it is bob's to take (claimNext would), not carol's, and not free for anyone.
      expect([await board().hasClaimable(), await board().hasClaimable('bob'), await board().hasClaimable('carol')]).toEqual([false, true, false]);
      expect((await board().claimNext('carol'))?.id).toBeUndefined();
      expect((await board().claimNext('bob'))?.id).toBe(2);
      expect(await board().hasClaimable('bob')).toBe(false);
      // A free task counts for every owner.
      await board().create({ subject: 'free' }, 'lead');
      expect([await board().hasClaimable(), await board().hasClaimable('carol')]).toEqual([true, true]);
    });

    it('follows the status transitions (and review for tasks that require it)', async () => {
      await board().create({ subject: 'a' }, 'lead');
      await expect(board().update(1, { status: 'completed' }, 'alice')).rejects.toThrow(/cannot go from pending to completed/);
      await board().update(1, { status: 'in_progress' }, 'alice');
      expect((await board().get(1)).owner).toBe('alice');
      await board().update(1, { status: 'pending' }, 'alice');
      expect(await board().get(1)).toMatchObject({ status: 'pending', owner: null });
      const r = await board().create({ subject: 'reviewed', requires_review: true }, 'lead');
      await board().claim(r.id, 'alice');
      await expect(board().update(r.id, { status: 'completed' }, 'alice')).rejects.toThrow(/requires review/);
      await board().update(r.id, { status: 'review' }, 'alice');
      expect(await board().get(r.id)).toMatchObject({ status: 'review', owner: 'alice', reviewer: null });
    });

    it('review claims are atomic across instances; decisions approve, send back and escalate', async () => {
      const other = await team.join();
      for (let i = 1; i <= 6; i++) {
        await board().create({ subject: `r${i}`, requires_review: true }, 'lead');
        await board().claim(i, 'alice');
        await board().update(i, { status: 'review' }, 'alice');
      }
      expect(await board().reviewable('alice')).toEqual([]); // not one's own work
      expect((await board().reviewable('rita')).map((t) => t.id)).toEqual([1, 2, 3, 4, 5, 6]);
      const taken: Array<{ id: number; by: string }> = [];
      await Promise.all(
        ['rita', 'rob', 'ray', 'rex'].map(async (reviewer, i) => {
          for (;;) {
            const task = await (i % 2 ? board() : other.store.board).claimReview(reviewer);
            if (!task) return;
            taken.push({ id: task.id, by: task.reviewer as string });
          }
        }),
      );
      expect(taken.map((t) => t.id).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
      const one = taken.find((t) => t.id === 1)!;
      const other1 = ['rita', 'rob', 'ray', 'rex'].find((r) => r !== one.by)!;
      await expect(board().decideReview(1, other1, { approve: true })).rejects.toThrow(`task #1 is being reviewed by ${one.by}`);
      expect(await board().decideReview(1, one.by, { approve: true, comment: 'fine' })).toMatchObject({
        outcome: 'approved',
        task: { status: 'completed', review_comment: 'fine' },
      });
      const two = taken.find((t) => t.id === 2)!;
      await expect(board().decideReview(2, two.by, { approve: false })).rejects.toThrow(/feedback is required/);
      expect(await board().decideReview(2, two.by, { approve: false, feedback: 'add tests', maxRounds: 1 })).toMatchObject({
        outcome: 'changes_requested',
        task: { status: 'in_progress', owner: 'alice', reviewer: null, review_rounds: 1, review_feedback: 'add tests' },
      });
      await board().update(2, { status: 'review' }, 'alice');
      const again = await board().claimReview('rita');
      expect(again?.id).toBe(2);
      expect(await board().decideReview(2, 'rita', { approve: false, feedback: 'still no tests', maxRounds: 1 })).toMatchObject({
        outcome: 'escalated',
        task: { status: 'review', review_escalated: true },
      });
      expect(await board().claimReview('rob')).toBeUndefined(); // escalated: the lead decides
      expect(await board().decideReview(2, 'lead', { approve: true, override: true })).toMatchObject({ outcome: 'approved' });
      await expect(board().decideReview(3, 'alice', { approve: true })).rejects.toThrow(/cannot review your own task/);
    });

    it('keeps every review round’s findings on the task, and refuses an approval while one blocks (docs/playbooks.md#review-domains)', async () => {
      const domains = { domains: ['security', 'polish'], blocksAt: { security: 'high' as const } };
      await board().create({ subject: 'login', requires_review: true, review_domains: domains }, 'lead');
      expect(await board().get(1)).toMatchObject({ review_domains: domains });
      await board().claim(1, 'alice');
      await board().update(1, { status: 'review' }, 'alice');
      await board().claimReview('rita');
      const sql = { domain: 'security', severity: 'high' as const, file: 'src/db.ts', line: 12, text: 'SQL built from input', blocking: true };
      const typo = { domain: 'polish', severity: 'low' as const, file: 'README.md', text: 'typo', blocking: false };
      await expect(board().decideReview(1, 'rita', { approve: true, findings: [sql, typo] })).rejects.toThrow(
        'task #1 cannot be approved with a blocking finding (security high (blocking) src/db.ts:12: SQL built from input): request changes so its owner fixes it',
      );
      expect(await board().get(1)).toMatchObject({ status: 'review', reviewer: 'rita' });
      expect((await board().get(1)).review_findings).toBeUndefined();
      await board().decideReview(1, 'rita', { approve: false, feedback: 'parameterize the query', findings: [sql, typo] });
      await board().update(1, { status: 'review' }, 'alice');
      await board().claimReview('rita');
      const done = await board().decideReview(1, 'rita', { approve: true, findings: [{ ...typo, text: 'typo, still' }] });
      expect(done.task.status).toBe('completed');
      expect((await board().get(1)).review_findings).toEqual([
        { ...sql, round: 1, reviewer: 'rita' },
        { ...typo, round: 1, reviewer: 'rita' },
        { ...typo, text: 'typo, still', round: 2, reviewer: 'rita' },
      ]);
    });

    it('release puts a gone agent’s unfinished work and taken reviews back', async () => {
      for (const s of ['a', 'b', 'c', 'd']) await board().create({ subject: s }, 'lead');
      await board().create({ subject: 'r', requires_review: true }, 'lead');
      await board().claim(1, 'alice');
      await board().update(1, { status: 'completed' }, 'alice');
      await board().claim(2, 'alice');
      await board().update(3, { owner: 'alice' }, 'lead');
      await board().claim(4, 'bob');
      await board().claim(5, 'bob');
      await board().update(5, { status: 'review' }, 'bob');
      await board().claimReview('alice');
      const released = await board().release('alice', 'lead');
      expect(released.map((t) => t.id)).toEqual([2, 3, 5]);
      expect(await board().get(1)).toMatchObject({ status: 'completed', owner: 'alice' });
      expect(await board().get(2)).toMatchObject({ status: 'pending', owner: null });
      expect(await board().get(3)).toMatchObject({ status: 'pending', owner: null });
      expect(await board().get(4)).toMatchObject({ status: 'in_progress', owner: 'bob' });
      expect(await board().get(5)).toMatchObject({ status: 'review', owner: 'bob', reviewer: null });
      expect(team.events.filter((e) => e.type === 'task' && e.action === 'released').map((e) => e.agent)).toEqual(['lead', 'lead', 'lead']);
    });

    it("only a task's owner or the lead completes, gives back, reassigns or blocks it; others are refused, the task unchanged", async () => {
      for (const s of ['a', 'b', 'c', 'd']) await board().create({ subject: s }, 'bob');
      await board().claim(1, 'alice');
      await board().update(2, { owner: 'alice' }, 'lead');
      const refused = (id: number, verb: string) =>
        new RegExp(`^task #${id} is alice's \\((in_progress|pending)\\); only alice or the lead may ${verb} it: message alice or the lead`);
      const attempts: Array<[string, () => Promise<unknown>, RegExp]> = [
        ['complete', () => board().update(1, { status: 'completed' }, 'bob'), refused(1, 'complete')],
        ['give back', () => board().update(1, { status: 'pending' }, 'bob'), refused(1, 'give back')],
        ['give back to bob', () => board().update(1, { status: 'pending', owner: 'bob' }, 'bob'), refused(1, 'give back')],
        ['start', () => board().update(2, { status: 'in_progress' }, 'bob'), refused(2, 'start')],
        ['unassign', () => board().update(2, { owner: null }, 'bob'), refused(2, 'reassign')],
        ['block', () => board().update(2, { addBlockedBy: [3] }, 'bob'), refused(2, 'add blockers to')],
        ['block through the other side', () => board().update(3, { addBlocks: [2] }, 'bob'), refused(2, 'add blockers to')],
        ['release', () => board().release('alice', 'bob'), /^only alice or the lead may give alice's tasks back/],
      ];
      const before = JSON.stringify(await board().list());
      for (const [what, attempt, message] of attempts) {
        const error = await attempt().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, what).toBeInstanceOf(TaskBoardError);
        expect((error as Error).message, what).toMatch(message);
      }
      expect(JSON.stringify(await board().list())).toBe(before);
      // Assigning an unowned task to someone else is the lead's; taking it for yourself is anyone's.
      await expect(board().update(3, { owner: 'carol' }, 'bob')).rejects.toThrow(/^only the lead assigns tasks to others/);
      await expect(board().update(3, { status: 'in_progress', owner: 'carol' }, 'bob')).rejects.toThrow(/^only the lead starts a task for someone else/);
      expect(await board().update(3, { owner: 'bob' }, 'bob')).toMatchObject({ owner: 'bob', status: 'pending' });
      // The owner and the lead may.
      expect(await board().update(1, { status: 'completed' }, 'alice')).toMatchObject({ status: 'completed' });
      expect(await board().update(2, { status: 'in_progress' }, 'lead')).toMatchObject({ status: 'in_progress', owner: 'alice' });
      expect(await board().update(2, { status: 'pending' }, 'lead')).toMatchObject({ status: 'pending', owner: null });
      await board().claim(4, 'alice');
      expect((await board().release('alice', 'alice')).map((t) => t.id)).toEqual([4]);
    });

    it('keeps a workflow tag and a result: the result its owner (or the lead) gives, an assignment at creation the lead alone', async () => {
      const workflow = { name: 'survey', phase: 'read', step: 'part-1' };
      await expect(board().create({ subject: 'read part 1', owner: 'alice', workflow }, 'bob')).rejects.toThrow(
        /^only the lead creates a task already assigned/,
      );
      const task = await board().create({ subject: 'read part 1', owner: 'alice', workflow }, 'lead');
      expect(task).toMatchObject({ owner: 'alice', status: 'pending', workflow });
      await board().update(task.id, { status: 'in_progress' }, 'lead');
      await expect(board().update(task.id, { result: 'mine' }, 'bob')).rejects.toThrow(/only alice or the lead may set the result of it/);
      const done = await board().update(task.id, { status: 'completed', result: 'three claims' }, 'alice');
      expect(done).toMatchObject({ status: 'completed', result: 'three claims', workflow });
      // Kept as stored, for another instance (a resumed run) too.
      const other = await team.join();
      expect(await other.store.board.get(task.id)).toMatchObject({ result: 'three claims', workflow });
    });

    it("a review is taken over (another reviewer's, or escalated) by the lead alone, and a task in review is decided only through a review", async () => {
      await board().create({ subject: 'r', requires_review: true }, 'lead');
      await board().claim(1, 'alice');
      await board().update(1, { status: 'review' }, 'alice');
      await board().claimReview('rita');
      await expect(board().decideReview(1, 'bob', { approve: true, override: true })).rejects.toThrow('task #1 is being reviewed by rita');
      await expect(board().update(1, { status: 'completed' }, 'rita')).rejects.toThrow(/^task #1 is in review; a reviewer decides it/);
      expect(await board().get(1)).toMatchObject({ status: 'review', reviewer: 'rita' });
      expect(await board().decideReview(1, 'lead', { approve: true, override: true })).toMatchObject({ outcome: 'approved' });
    });

    it('tells listeners of changes made through another instance', async () => {
      const other = await team.join();
      const changes: BoardChange[] = [];
      board().onChange((change) => changes.push(change));
      const mentions = (id: number, since: number) => changes.slice(since).some((c) => (c.source === 'local' ? c.task.id === id : c.ids.includes(id)));
      const created = await other.store.board.create({ subject: 'from elsewhere' }, 'bob');
      await when(
        (check) => board().onChange(check),
        () => (mentions(created.id, 0) ? true : undefined),
      );
      expect(await board().get(created.id)).toMatchObject({ subject: 'from elsewhere' });
      const before = changes.length;
      await other.store.board.claim(created.id, 'bob');
      await when(
        (check) => board().onChange(check),
        () => (mentions(created.id, before) ? true : undefined),
      );
      expect(await board().get(created.id)).toMatchObject({ owner: 'bob' });
    });
  });
}
