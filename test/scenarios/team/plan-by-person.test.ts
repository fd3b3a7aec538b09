// HUDDLE_PLAN_APPROVAL=person: a plan-mode teammate's plan waits in the needs-you queue instead of
// going to the lead; the person's y or n decides it, and without anyone to ask the lead decides.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/runtime/store/bus.js';
import { reply, replyText, toolUse, type RecordedRequest, type Scripted } from '../../helpers/fake-api.ts';
import { inboxMessages, lastUserTexts, openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function newMessage(request: RecordedRequest, type: Message['type']): Message | undefined {
  return inboxMessages(lastUserTexts(request)).findLast((m) => m.type === type);
}

/** carol plans, revises once when rejected, and writes once approved. */
function carolStep(request: RecordedRequest): Scripted | undefined {
  const answer = newMessage(request, 'plan_approval_response');
  if (answer?.approve) return reply(toolUse('write_file', { path: 'hello.txt', content: 'hello\n' }), toolUse('idle', {}));
  if (answer) return reply(toolUse('plan_approval', { plan: 'Write hello.txt, with a test.' }));
  return reply(toolUse('plan_approval', { plan: 'Write hello.txt.' }));
}

describe('plans decided by the person', () => {
  it('queues the plan for the person; n sends it back, y approves, and the lead is never asked', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_PLAN_APPROVAL: 'person' } }));
    h.fake.respond((request) => (request.agent === 'carol' ? carolStep(request) : request.agent === 'lead' ? replyText('ok') : undefined));
    h.team.approvals.attachAnswerer();
    await h.spawn('carol', 'Plan the greeting.', { planModeRequired: true });

    const first = await h.waitFor('the first plan in the queue', () => h.team.approvals.list().find((r) => r.kind === 'plan'));
    expect(first).toMatchObject({ agent: 'carol', tool: 'plan', summary: 'Write hello.txt.' });
    expect(await h.waitForStatus('carol', 'waiting')).toMatchObject({ status_reason: 'plan approval' });
    h.team.approvals.resolve(first.id, 'deny');

    const second = await h.waitFor('the revised plan', () => h.team.approvals.list().find((r) => r.kind === 'plan' && r.id !== first.id));
    expect(second.summary).toBe('Write hello.txt, with a test.');
    h.team.approvals.resolve(second.id, 'approve');

    await h.waitForEvent('hello.txt written', (e) => e.agent === 'carol' && e.type === 'tool_result' && e.name === 'write_file');
    expect(existsSync(path.join(h.root, 'hello.txt'))).toBe(true);
    expect(h.inbox('lead').filter((m) => m.type === 'plan_approval_request')).toEqual([]);
    const answers = h.inbox('carol').filter((m) => m.type === 'plan_approval_response');
    expect(answers.map((m) => [m.approve, m.feedback])).toEqual([
      [false, 'the person did not approve it; revise the plan and send it again'],
      [true, 'approved by the person'],
    ]);
  });

  it('asks the lead when no console is there to answer', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_PLAN_APPROVAL: 'person' } }));
    h.fake.respond((request) => (request.agent === 'carol' ? carolStep(request) : request.agent === 'lead' ? replyText('ok') : undefined));
    await h.spawn('carol', 'Plan the greeting.', { planModeRequired: true });
    const asked = await h.waitFor('the lead asked', () => h.inbox('lead').find((m) => m.type === 'plan_approval_request'));
    expect(asked).toMatchObject({ from: 'carol', plan: 'Write hello.txt.' });
    expect(h.team.approvals.size).toBe(0);
  });
});

describe('auto-after: the timer and the person’s edit', () => {
  it('approves after the minutes set; an edit starts the wait over, and the edit is what is approved', async () => {
    const { vi } = await import('vitest');
    const { EventHub } = await import('../../../src/runtime/events/events.js');
    const { ApprovalQueue } = await import('../../../src/runtime/store/memory-approvals.js');
    const { askPersonAboutPlan } = await import('../../../src/agents/lifecycle/plan-by-person.js');
    vi.useFakeTimers();
    try {
      const approvals = new ApprovalQueue(new EventHub());
      approvals.attachAnswerer(['plan']);
      const decided: unknown[][] = [];
      const protocols = {
        decidePlan: async (...args: unknown[]) => {
          decided.push(args);
          return 'carol';
        },
        askLeadAboutPlan: async () => undefined,
      };
      const done = askPersonAboutPlan(approvals, protocols, { teammate: 'carol', requestId: 'plan_1', plan: 'Write hello.txt.', autoApproveMinutes: 1 });
      const [waiting] = approvals.list();
      expect(waiting).toMatchObject({ kind: 'plan', detail: 'Write hello.txt.' });

      await vi.advanceTimersByTimeAsync(50_000);
      expect(approvals.revise(waiting!.id, 'Write HELLO.txt.')).toBe(true);
      await vi.advanceTimersByTimeAsync(50_000); // 100 s after the plan, 50 s after the edit: still waiting
      expect(decided).toEqual([]);
      expect(approvals.size).toBe(1);

      await vi.advanceTimersByTimeAsync(10_001); // a minute after the edit
      await done;
      expect(decided).toEqual([['plan_1', true, 'auto-approved after 1 min', 'person', 'Write HELLO.txt.']]);
      expect(approvals.size).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
