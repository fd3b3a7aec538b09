// One rule from events to a transcript (src/agents/loop/transcript.ts): what an agent sends the model
// live and what a resume rebuilds from its log are the same messages, whatever happened — tool
// calls with text between them, a response cut at max_tokens, calls skipped because the agent
// stopped, old results trimmed, a compaction, a restart, a /clear, an interrupted stream, a retry.
// A real team against the fake Messages API; the log is the file backend's.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replayEvents } from '../../../src/agents/loop/transcript-replay.js';
import { Transcript } from '../../../src/agents/loop/transcript.js';
import type { HuddleEvent } from '../../../src/runtime/events/events.js';
import { readAgentEvents } from '../../../src/runtime/store/file/event-log.js';
import { overloaded, reply, replyText, text, toolUse, type Block, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';

let h: TeamHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A summary request (compaction, restart): sent without tools. */
const isSummaryRequest = (request: RecordedRequest) => !request.body?.tools;

/** What a resume would rebuild for `name` from the log written so far. */
function replayed(harness: TeamHarness, name: string, role: string) {
  const events = readAgentEvents(path.join(harness.workspace.teamDir, 'logs'), name);
  return replayEvents(events, { name, role, team: harness.team.ctx.teamName }).messages;
}

const event = (type: string, fields: object) => ({ ts: '', agent: 'alice', type, ...fields }) as HuddleEvent;

describe('the live transcript and the replayed log', () => {
  it('agree after tool calls, a cut response, trims, a compaction, skipped calls, a restart and a /clear', async () => {
    h = await openTeamHarness({ env: { HUDDLE_TRIM_AT: '1%', HUDDLE_TRIM_KEEP_TURNS: '1', HUDDLE_COMPACT_AT: '0' } });
    const harness = h;
    writeFileSync(path.join(harness.root, 'big.txt'), `${'a line of a big file\n'.repeat(200)}`);
    // Responses that say the context is well filled (over HUDDLE_TRIM_AT): old results get trimmed.
    const big = (...blocks: Block[]): Scripted => ({
      kind: 'message',
      content: blocks,
      stopReason: blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
      usage: { input_tokens: 5_000, output_tokens: 10 },
    });
    const turns: Scripted[] = [
      // Text between tool calls; then a response cut at max_tokens (its call is not run); then a
      // call after which the first read's result is old enough to be trimmed.
      big(text('Reading.'), toolUse('read_file', { path: 'big.txt' }), text(' And writing.'), toolUse('write_file', { path: 'a.txt', content: 'a\n' })),
      { ...big(text('Too long'), toolUse('bash', { command: 'echo never' })), stopReason: 'max_tokens' } as Scripted,
      big(toolUse('read_file', { path: 'a.txt' })),
      replyText('Done with the first part.'),
      // After a message: idle, and the call after it is skipped (the agent is stopping).
      reply(toolUse('idle', {}), toolUse('write_file', { path: 'b.txt', content: 'never\n' })),
      // The restarted loop's first turn, and the turn after /clear.
      replyText('Restarted; carrying on.'),
      replyText('A fresh start.'),
    ];
    const summaries = ['SUMMARY: alice read big.txt and wrote a.txt.', 'SUMMARY for the restart: a.txt is written.'];
    harness.fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      if (isSummaryRequest(request)) return replyText(summaries.shift() ?? 'SUMMARY');
      return turns.shift() ?? replyText('nothing more');
    });
    const agree = () => expect(replayed(harness, 'alice', 'coder')).toEqual(harness.team.teammates.get('alice')!.loop.messages);
    const idleAfter = (count: number) => harness.waitFor(`alice idle (${count})`, () => harness.statuses('alice').filter((s) => s === 'idle').length >= count);

    await harness.spawn('alice', 'Work on the files.');
    await idleAfter(1);
    const trims = harness.events.filter((e) => e.agent === 'alice' && e.type === 'compaction' && e.kind === 'trim');
    expect(trims.length).toBeGreaterThan(0); // not vacuous: a trim happened, and is replayed
    expect(JSON.stringify(harness.team.teammates.get('alice')!.loop.messages)).toContain('cut to save context');
    agree();

    const compacted = await harness.session.compact('alice', 'the files');
    expect(compacted.deferred).toBe(false);
    agree();

    await harness.session.send('alice', 'Anything else?');
    await idleAfter(2);
    expect(harness.events.some((e) => e.agent === 'alice' && e.type === 'tool_result' && e.skipped === true && e.name === 'write_file')).toBe(true);
    agree();

    await harness.session.restart('alice');
    await harness.waitForEvent('the restarted loop answers', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Restarted; carrying on.');
    await harness.waitFor('alice idle after the restart', () => harness.statuses('alice').at(-1) === 'idle');
    agree();

    expect(harness.session.clear('alice')).toBe(true);
    expect(harness.team.teammates.get('alice')!.loop.messages).toEqual([]);
    agree();
    await harness.session.send('alice', 'Start over.');
    await harness.waitForEvent('the turn after /clear', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'A fresh start.');
    await harness.waitFor('alice idle after /clear', () => harness.statuses('alice').at(-1) === 'idle');
    agree();
    expect(harness.team.teammates.get('alice')!.loop.messages).toHaveLength(2);
  });

  it('agree after an interrupted stream (its partial text kept) and a retried call', async () => {
    h = await openTeamHarness({ env: { HUDDLE_RETRY_BASE_MS: '5' } });
    const harness = h;
    harness.fake.script(
      'lead',
      { kind: 'hang', content: [text('A partial answer that the person interrupts')] },
      overloaded(),
      replyText('Answered after a retry.'),
    );
    harness.session.start();
    harness.session.prompt('Talk.');
    await harness.waitForEvent('streamed text', (e) => e.agent === 'lead' && e.type === 'text_delta');
    expect(harness.session.interrupt('lead')).toBe(true);
    await harness.waitFor('the interrupted turn to end', () => harness.team.lead.lastOutcome?.kind === 'interrupted' && harness.team.lead.isIdle);
    expect(JSON.stringify(harness.team.lead.loop.messages)).toContain('A partia'); // the first delta (the fake then hangs)
    expect(replayed(harness, 'lead', 'lead')).toEqual(harness.team.lead.loop.messages);

    harness.session.prompt('Again.');
    await harness.waitFor('the answer', () => harness.team.lead.lastText === 'Answered after a retry.' && harness.team.lead.isIdle);
    expect(harness.events.some((e) => e.agent === 'lead' && e.type === 'retry')).toBe(true);
    expect(replayed(harness, 'lead', 'lead')).toEqual(harness.team.lead.loop.messages);
  });
});

describe('context_reset', () => {
  it('restarts the transcript from its first turn, or empty; what follows is added to it', () => {
    const transcript = new Transcript();
    transcript.replay([
      event('prompt', { text: 'old work', source: 'user' }),
      event('usage', {}),
      event('text', { text: 'old answer' }),
      event('context_reset', { reason: 'restart', first_turn: '<identity>…</identity>\n\n<summary>\nS\n</summary>' }),
      event('prompt', { text: 'next', source: 'user' }),
    ]);
    expect(transcript.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: '<identity>…</identity>\n\n<summary>\nS\n</summary>' },
          { type: 'text', text: 'next' },
        ],
      },
    ]);
    transcript.apply(event('context_reset', { reason: 'clear' }));
    expect(transcript.messages).toEqual([]);
  });
});
