// The lead–teammate protocols (docs/contract.md#protocols): shutdown request/response (approve ends the
// loop after the current tool call, refuse keeps it running, silence is stopped after a grace
// period) and plan approval (read-only until approved, feedback on rejection, auto-approve).
// In-process, through the agents' own tool calls against the fake API.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/runtime/store/bus.js';
import { reply, replyText, toolUse, type Scripted } from '../../helpers/fake-api.ts';
import type { RecordedRequest } from '../../helpers/fake-api.ts';
import { inboxMessages, lastToolResults, lastUserTexts, toolNames } from '../../helpers/team-harness.ts';
import { harnessPerTest } from '../../helpers/harness-per-test.js';

const open = harnessPerTest({ env: { HUDDLE_IDLE_TIMEOUT_MS: '20000' } });

/** The newest message of `type` in the last user turn of a request. */
function newMessage(request: RecordedRequest, type: Message['type']): Message | undefined {
  return inboxMessages(lastUserTexts(request)).findLast((m) => m.type === type);
}

describe('shutdown protocol', () => {
  it('an approved shutdown ends the loop after that tool call: the next call is not run, no more requests', async () => {
    const h = await open();
    h.fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      const ask = newMessage(request, 'shutdown_request');
      if (ask) {
        return reply(
          toolUse('shutdown_response', { request_id: ask.request_id, approve: true }),
          toolUse('write_file', { path: 'after.txt', content: 'should not be written' }),
        );
      }
      return replyText('Ready.');
    });
    const alice = await h.spawn('alice', 'Wait.');
    await h.waitForStatus('alice', 'idle');

    const requestId = await h.team.requestShutdown('alice');
    expect(requestId).toMatch(/^shutdown_/);
    const member = await h.waitForStatus('alice', 'shutdown');
    await alice.done;

    expect(member.status_reason).toBe('shutdown approved');
    // Correlated by request_id, both ways.
    const asked = h.inbox('alice').filter((m) => m.type === 'shutdown_request');
    expect(asked.map((m) => [m.from, m.request_id])).toEqual([['lead', requestId]]);
    const answers = h.inbox('lead').filter((m) => m.type === 'shutdown_response');
    expect(answers.map((m) => [m.from, m.request_id, m.approve])).toEqual([['alice', requestId, true]]);
    // The second tool call of that response was not run and got an error result in the transcript.
    expect(existsSync(path.join(h.root, 'after.txt'))).toBe(false);
    const results = alice.loop.messages.at(-1)!.content as Array<{ type: string; content: string; is_error?: boolean }>;
    expect(results.map((r) => [r.type, r.is_error ?? false, r.content])).toEqual([
      ['tool_result', false, 'shutting down'],
      ['tool_result', true, 'not run: the agent is stopping'],
    ]);
    expect(h.events.some((e) => e.agent === 'alice' && e.type === 'tool_call' && e.name === 'write_file')).toBe(false);
    // The loop has ended: two model requests in all (the first turn and the shutdown turn).
    expect(alice.finished).toBe(true);
    expect(h.requestsOf('alice')).toHaveLength(2);
    // The request is closed: answering it again is refused.
    await expect(h.team.answerShutdown('alice', requestId, true)).rejects.toThrow(`no open shutdown request '${requestId}' for alice`);
  });

  it('a refusal keeps the teammate running and the lead gets the reason', async () => {
    const h = await open();
    h.fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      const ask = newMessage(request, 'shutdown_request');
      if (ask) return reply(toolUse('shutdown_response', { request_id: ask.request_id, approve: false, reason: 'still running the test suite' }));
      if (newMessage(request, 'message')) return replyText('Still here.');
      if (lastToolResults(request).length) return replyText('Carrying on.');
      return replyText('Ready.');
    });
    const alice = await h.spawn('alice', 'Wait.');
    await h.waitForStatus('alice', 'idle');

    const requestId = await h.team.requestShutdown('alice');
    const answer = await h.waitFor('the refusal', () => h.inbox('lead').find((m) => m.type === 'shutdown_response'));
    expect(answer).toMatchObject({ from: 'alice', to: 'lead', request_id: requestId, approve: false, reason: 'still running the test suite' });
    expect(answer.content).toContain('still running the test suite');
    await h.waitForStatus('alice', 'idle');
    expect(h.team.ctx.roster.get('alice')?.status).toBe('idle');

    // Still running: it answers the next message.
    const before = h.requestsOf('alice').length;
    await h.team.bus.send({ from: 'lead', to: 'alice', content: 'Are you there?' });
    await h.waitFor('alice to answer', () => h.requestsOf('alice').length > before);
    await h.waitForStatus('alice', 'idle');
    expect(alice.finished).toBe(false);
    expect(h.statuses('alice')).not.toContain('shutdown');
  });

  it('a teammate that never answers is stopped after the grace period, and the lead is told', async () => {
    const h = await open({ shutdownGraceMs: 400 });
    h.fake.respond((request) => {
      // alice ignores the request; bob is stuck in a model call that never finishes.
      if (request.agent === 'alice') return newMessage(request, 'shutdown_request') ? replyText('I will keep working.') : replyText('Ready.');
      if (request.agent === 'bob') return newMessage(request, 'shutdown_request') ? { kind: 'hang' } : replyText('Ready.');
      return undefined;
    });
    const alice = await h.spawn('alice', 'Wait.');
    const bob = await h.spawn('bob', 'Wait.');
    await Promise.all([h.waitForStatus('alice', 'idle'), h.waitForStatus('bob', 'idle')]);

    const asked = Date.now();
    const aliceId = await h.team.requestShutdown('alice');
    const bobId = await h.team.requestShutdown('bob');
    const [aliceDown, bobDown] = await Promise.all([h.waitForStatus('alice', 'shutdown'), h.waitForStatus('bob', 'shutdown')]);
    await Promise.all([alice.done, bob.done]);

    expect(Date.now() - asked).toBeGreaterThanOrEqual(390);
    expect(aliceDown.status_reason).toBe('no answer to shutdown request within 400 ms');
    expect(bobDown.status_reason).toBe('no answer to shutdown request within 400 ms');
    expect(h.requestsOf('bob')).toHaveLength(2); // the hanging call was cut, not retried
    const told = h
      .inbox('lead')
      .filter((m) => m.from === 'huddle')
      .map((m) => m.content)
      .sort();
    expect(told).toEqual([
      `[huddle] alice did not answer shutdown request ${aliceId} in time and was stopped.`,
      `[huddle] bob did not answer shutdown request ${bobId} in time and was stopped.`,
    ]);
    // The lead was told before each status said shutdown.
    for (const name of ['alice', 'bob']) {
      const toldAt = h.events.findIndex((e) => e.type === 'message_sent' && e.from === 'huddle' && String(e.content).startsWith(`[huddle] ${name} did not`));
      const downAt = h.events.findIndex((e) => e.agent === name && e.type === 'status' && e.status === 'shutdown');
      expect(toldAt).toBeGreaterThanOrEqual(0);
      expect(toldAt).toBeLessThan(downAt);
    }
    // Too late to answer now.
    await expect(h.team.answerShutdown('alice', aliceId, true)).rejects.toThrow(/no open shutdown request/);
  });

  it('unknown request ids and teammates give clear tool errors; nothing changes', async () => {
    const h = await open();
    h.fake.respond((request) => {
      if (request.agent === 'alice') {
        if (request.body.messages.length === 1) return reply(toolUse('shutdown_response', { request_id: 'shutdown_nope', approve: true }));
        return replyText('Noted.');
      }
      if (request.agent === 'lead') {
        if (request.body.messages.length === 1) {
          return reply(toolUse('plan_approval', { request_id: 'plan_nope', approve: true }), toolUse('shutdown_request', { teammate: 'zed' }));
        }
        return replyText('Understood.');
      }
      return undefined;
    });
    const alice = await h.spawn('alice', 'Wait.');
    await h.waitForStatus('alice', 'idle');
    const aliceResults = lastToolResults(h.requestsOf('alice')[1]!);
    expect(aliceResults).toEqual([
      expect.objectContaining({ is_error: true, content: "shutdown_response failed: no open shutdown request 'shutdown_nope' for alice; there is none open" }),
    ]);
    expect(alice.finished).toBe(false);
    expect(h.team.ctx.roster.get('alice')?.status).toBe('idle');

    h.team.start();
    h.team.lead.prompt('Try the protocols.');
    await h.waitFor('the lead turn to end', () => h.team.lead.lastOutcome);
    const leadResults = lastToolResults(h.requestsOf('lead')[1]!);
    expect(leadResults.map((r) => [r.is_error, r.content])).toEqual([
      [true, "plan_approval failed: no open plan request 'plan_nope'; there is none open"],
      [true, "shutdown_request failed: no teammate named 'zed'; teammates: alice"],
    ]);
    expect(h.inbox('alice').filter((m) => m.type === 'shutdown_request')).toEqual([]);
    expect(h.inbox('lead')).toEqual([]);
  });
});

describe('plan approval', () => {
  /** What carol (plan mode) answers: read-only probes and a plan, a revision, then the work. */
  function carolStep(request: RecordedRequest): Scripted | undefined {
    const answer = newMessage(request, 'plan_approval_response');
    if (answer?.approve) return reply(toolUse('write_file', { path: 'hello.txt', content: 'hello\n' }), toolUse('idle', {}));
    if (answer && !answer.approve) return replyText('I will revise the plan.');
    if (newMessage(request, 'message')) return reply(toolUse('plan_approval', { plan: 'Write hello.txt, then add a test for it.' }));
    if (lastToolResults(request).length) return undefined; // unreachable in this script
    return reply(
      toolUse('bash', { command: 'echo x > f' }),
      toolUse('bash', { command: 'rm f' }),
      toolUse('bash', { command: 'ls' }),
      toolUse('plan_approval', { plan: 'Write hello.txt.' }),
    );
  }

  it('plan mode: read-only until approved; a rejection brings feedback, an approval the full tools', async () => {
    const h = await open();
    writeFileSync(path.join(h.root, 'f'), 'keep me\n');
    let planRequests = 0;
    h.fake.respond((request) => {
      if (request.agent === 'carol') return carolStep(request);
      if (request.agent === 'lead') {
        const ask = newMessage(request, 'plan_approval_request');
        if (ask) {
          planRequests += 1;
          return planRequests === 1
            ? reply(toolUse('plan_approval', { request_id: ask.request_id, approve: false, feedback: 'Also add a test.' }))
            : reply(toolUse('plan_approval', { request_id: ask.request_id, approve: true }));
        }
        return replyText('Decided.');
      }
      return undefined;
    });
    h.team.start();
    const carol = await h.spawn('carol', 'Add a hello file.', { planModeRequired: true });

    // Submitted: carol waits on the decision.
    const waiting = await h.waitForStatus('carol', 'waiting');
    expect(waiting.status_reason).toBe('plan approval');
    const first = h.requestsOf('carol')[0]!;
    const readOnly = toolNames(first);
    expect(readOnly).not.toContain('write_file');
    expect(readOnly).not.toContain('edit_file');
    expect(readOnly).toEqual(expect.arrayContaining(['bash', 'read_file', 'glob', 'grep', 'plan_approval', 'send_message', 'idle', 'shutdown_response']));
    expect(first.body.messages[0].content[0].text).toContain('You are in plan mode');

    // The bash probes: writes refused, reads allowed; the file is untouched.
    const probes = h.events.filter((e) => e.agent === 'carol' && e.type === 'tool_result').map((e) => ({ name: e.name, ok: e.ok, content: String(e.content) }));
    expect(probes.map((p) => [p.name, p.ok])).toEqual([
      ['bash', false],
      ['bash', false],
      ['bash', true],
      ['plan_approval', true],
    ]);
    expect(probes[0]!.content).toContain('refused in plan mode: redirection');
    expect(probes[1]!.content).toContain("refused in plan mode: 'rm' is not on the read-only list");
    expect(probes[2]!.content).toContain('f');
    expect(probes[3]!.content).toMatch(/^plan sent to the lead \(request_id plan_/);
    expect(readFileSync(path.join(h.root, 'f'), 'utf8')).toBe('keep me\n');

    // The lead rejects with feedback; carol receives it and, not resubmitting yet, rests idle (not waiting).
    const rejection = await h.waitFor('the rejection to reach carol', () =>
      h
        .requestsOf('carol')
        .map((r) => newMessage(r, 'plan_approval_response'))
        .find(Boolean),
    );
    expect(rejection).toMatchObject({ from: 'lead', approve: false, feedback: 'Also add a test.' });
    expect(rejection.content).toContain('Also add a test.');
    const firstAsk = h.inbox('lead').find((m) => m.type === 'plan_approval_request')!;
    expect(firstAsk).toMatchObject({ from: 'carol', plan: 'Write hello.txt.', request_id: rejection.request_id });
    await h.waitFor('carol idle after the rejection', () => h.statuses('carol').at(-1) === 'idle');
    expect(toolNames(h.requestsOf('carol').at(-1)!)).not.toContain('write_file');

    // Asked again, carol sends the revised plan; the lead approves; carol now has write_file and uses it.
    await h.team.bus.send({ from: 'lead', to: 'carol', content: 'Send the revised plan.' });
    // The write is done when its tool_result is (the file may exist, still empty, a moment before).
    await h.waitForEvent('hello.txt written', (e) => e.agent === 'carol' && e.type === 'tool_result' && e.name === 'write_file');
    expect(readFileSync(path.join(h.root, 'hello.txt'), 'utf8')).toBe('hello\n');
    const approvedTurn = h.requestsOf('carol').find((r) => newMessage(r, 'plan_approval_response')?.approve === true)!;
    expect(toolNames(approvedTurn)).toEqual(expect.arrayContaining(['write_file', 'edit_file', 'task_create', 'claim_task']));
    expect(toolNames(approvedTurn)).not.toContain('plan_approval');
    const asks = h.inbox('lead').filter((m) => m.type === 'plan_approval_request');
    expect(asks.map((m) => m.plan)).toEqual(['Write hello.txt.', 'Write hello.txt, then add a test for it.']);
    const decisions = h.inbox('carol').filter((m) => m.type === 'plan_approval_response');
    expect(decisions.map((m) => [m.request_id, m.approve])).toEqual([
      [asks[0]!.request_id, false],
      [asks[1]!.request_id, true],
    ]);
    expect(carol.planPending).toBe(false);
    await h.waitForStatus('carol', 'idle');
    // After approval plan_approval is no longer a tool for carol: submitting again is impossible.
    expect(carol.loop.tools.has('plan_approval')).toBe(false);
  });
});
