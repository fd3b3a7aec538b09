// A fresh context per task (docs/contract.md#injected-turns): a teammate that takes a new task
// from the board starts from its system prompt, its spawn assignment, a short memory of its earlier
// tasks and the task, not its whole transcript; freshContextPerTask false keeps one conversation.
import { afterEach, describe, expect, it } from 'vitest';
import { reply, replyText, toolUse, type Scripted } from '../../helpers/fake-api.ts';
import { allUserTexts, openTeamHarness, turnsOf, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const TASKS = 4;

/** Task n: write task-n.txt, complete it, say so. */
function workOn(n: number): Scripted[] {
  return [
    reply(toolUse('write_file', { path: `task-${n}.txt`, content: `work of task ${n}\n`.repeat(40) })),
    reply(toolUse('task_update', { task_id: n, status: 'completed' })),
    replyText(`Wrote task-${n}.txt for task ${n}.`),
  ];
}

async function runTasks(env: Record<string, string>): Promise<TeamHarness> {
  const h = (harness = await openTeamHarness({ env }));
  for (let n = 1; n <= TASKS; n++) await h.team.ctx.board.create({ subject: `Task ${n}` }, 'lead');
  h.fake.script('alice', replyText('Ready for the board.'));
  for (let n = 1; n <= TASKS; n++) h.fake.script('alice', ...workOn(n));
  h.team.start();
  await h.spawn('alice', 'Work through the board; keep files small.');
  await h.waitFor('every task done', async () => (await h.team.ctx.board.list()).every((task) => task.status === 'completed'), 30_000);
  await h.waitForEvent('alice done talking', (e) => e.agent === 'alice' && e.type === 'text' && e.text === `Wrote task-${TASKS}.txt for task ${TASKS}.`);
  return h;
}

/** The first request of each auto-claimed task: the one whose last user turn names it. */
function firstRequestOfTask(h: TeamHarness, n: number) {
  return h.requestsOf('alice').find((request) => allUserTexts(request).some((t) => t.includes(`<auto-claimed>Task #${n}: Task ${n}</auto-claimed>`)))!;
}

describe('fresh context per task', () => {
  it('each task starts from the assignment, a memory of earlier tasks and the task; its input does not grow', async () => {
    const h = await runTasks({});
    const firsts = Array.from({ length: TASKS }, (_, i) => firstRequestOfTask(h, i + 1));
    for (const request of firsts.slice(1)) {
      // One user turn: nothing of the earlier conversation.
      expect(turnsOf(request)).toHaveLength(1);
      const turn = allUserTexts(request).join('\n');
      expect(turn).toContain('You were spawned with: Work through the board; keep files small.');
      expect(turn).not.toContain('work of task');
    }
    const last = allUserTexts(firsts[TASKS - 1]!).join('\n');
    expect(last).toContain('- #1 Task 1: Wrote task-1.txt for task 1. Files: task-1.txt.');
    expect(last).toContain('- #3 Task 3: Wrote task-3.txt for task 3. Files: task-3.txt.');
    // The memory grows by one short line per task; the transcript it replaces would grow by a whole task.
    const sizes = firsts.map((request) => JSON.stringify(request.body.messages).length);
    expect(sizes[3]! - sizes[2]!).toBeLessThan(200);
    expect(h.events.filter((e) => e.agent === 'alice' && e.type === 'context_reset' && e.reason === 'new_task')).toHaveLength(TASKS);
  });

  it('freshContextPerTask false keeps the whole conversation', async () => {
    const h = await runTasks({ HUDDLE_FRESH_CONTEXT_PER_TASK: '0' });
    const request = firstRequestOfTask(h, 3);
    expect(JSON.stringify(request.body.messages)).toContain('work of task 2');
    expect(h.events.filter((e) => e.type === 'context_reset')).toEqual([]);
  });
});
