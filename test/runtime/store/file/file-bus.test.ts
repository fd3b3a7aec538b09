import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DELIVERED_TAIL } from '../../../../src/runtime/store/file/file-bus.js';
import { FileBus } from '../../../../src/runtime/store/file/file-bus.js';
import { type Message, UnknownRecipientError } from '../../../../src/runtime/store/bus.js';
import { EventHub, type HuddleEvent } from '../../../../src/runtime/events/events.js';
import { formatInbox } from '../../../../src/runtime/inbox.js';
import { messageTools } from '../../../../src/runtime/tools/message-tools.js';
import type { ToolContext } from '../../../../src/runtime/tools/types.js';
import { bundleFixture, runFixture } from './fixtures/bundle.js';

let dir: string;
let names: string[];
let hub: EventHub;
let events: HuddleEvent[];
let bus: FileBus;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'huddle-bus-'));
  names = ['lead', 'alice'];
  hub = new EventHub();
  events = [];
  hub.subscribe((event) => events.push(event));
  bus = new FileBus(path.join(dir, 'inbox'), { knownNames: () => names, events: hub });
});
afterEach(() => {
  bus.close();
  rmSync(dir, { recursive: true, force: true });
});

const warnings = () => events.filter((event) => event.type === 'warning');

describe('sending', () => {
  it('refuses an unknown recipient, naming the known ones', async () => {
    await expect(bus.send({ from: 'lead', to: 'bob', content: 'hi' })).rejects.toThrow("no teammate named 'bob'; known names: lead, alice");
    await expect(bus.send({ from: 'lead', to: 'bob', content: 'hi' })).rejects.toBeInstanceOf(UnknownRecipientError);
    expect(() => statSync(bus.inboxFile('bob'))).toThrow(); // nothing was written
  });

  it('assigns a unique id and a timestamp, appends one line and emits message_sent', async () => {
    const first = await bus.send({ from: 'lead', to: 'alice', content: 'line 1\nline 2', request_id: 'r1', plan: undefined });
    const second = await bus.send({ from: 'lead', to: 'alice', content: 'again' });
    expect(first).toMatchObject({ type: 'message', from: 'lead', to: 'alice', content: 'line 1\nline 2', request_id: 'r1' });
    expect(first.id).toMatch(/^msg_[0-9a-z]+$/);
    expect(first.id).not.toBe(second.id);
    expect(first.id < second.id).toBe(true); // time-ordered
    expect(Number.isNaN(Date.parse(first.ts))).toBe(false);
    expect('plan' in first).toBe(false);
    const lines = readFileSync(bus.inboxFile('alice'), 'utf8').split('\n');
    expect(lines).toHaveLength(3); // two lines and the final newline
    expect(JSON.parse(lines[0]!)).toEqual(first);
    expect(events.filter((event) => event.type === 'message_sent')).toMatchObject([
      { agent: 'lead', id: first.id, to: 'alice', message_type: 'message', request_id: 'r1' },
      { agent: 'lead', id: second.id, to: 'alice' },
    ]);
  });

  it('broadcasts a copy to everyone but the sender and the excluded', async () => {
    names = ['lead', 'alice', 'bob', 'carol'];
    const sent = await bus.broadcast('lead', 'standup', ['carol']);
    expect(sent.map((message) => [message.to, message.type])).toEqual([
      ['alice', 'broadcast'],
      ['bob', 'broadcast'],
    ]);
    expect(await bus.unreadCount('carol')).toBe(0);
    expect(await bus.unreadCount('lead')).toBe(0);
    expect((await bus.take('bob'))[0]).toMatchObject({ from: 'lead', content: 'standup', type: 'broadcast' });
  });
});

describe('reading', () => {
  it('peeks without consuming, acks monotonically, and never truncates the inbox', async () => {
    const a = await bus.send({ from: 'lead', to: 'alice', content: 'a' });
    const b = await bus.send({ from: 'lead', to: 'alice', content: 'b' });
    const size = statSync(bus.inboxFile('alice')).size;

    const first = await bus.peek('alice');
    expect(first.messages.map((m) => m.id)).toEqual([a.id, b.id]);
    expect(first.nextOffset).toBe(size);
    expect((await bus.peek('alice')).messages).toHaveLength(2); // still there: peek is not a read
    expect(await bus.unreadCount('alice')).toBe(2);

    const limited = await bus.peek('alice', { limit: 1 });
    expect(limited.messages.map((m) => m.id)).toEqual([a.id]);
    await bus.ack('alice', limited.nextOffset);
    expect((await bus.peek('alice')).messages.map((m) => m.id)).toEqual([b.id]);

    await bus.ack('alice', first.nextOffset);
    expect(await bus.unreadCount('alice')).toBe(0);
    await bus.ack('alice', limited.nextOffset); // an older offset: no step back
    expect(await bus.unreadCount('alice')).toBe(0);
    expect(bus.cursor('alice')).toEqual({ offset: size, line: 2, delivered_ids_tail: [a.id, b.id] });
    expect(statSync(bus.inboxFile('alice')).size).toBe(size);

    const c = await bus.send({ from: 'lead', to: 'alice', content: 'c' });
    expect((await bus.take('alice')).map((m) => m.id)).toEqual([c.id]);
    expect(await bus.take('alice')).toEqual([]);
    // A fresh bus (a restarted process) continues from the cursor.
    const again = new FileBus(bus.inboxDir, { knownNames: () => names });
    expect(await again.take('alice')).toEqual([]);
    again.close();
    expect(readFileSync(bus.inboxFile('alice'), 'utf8').trimEnd().split('\n')).toHaveLength(3);
  });

  it('refuses to ack past the end or into the middle of a line', async () => {
    await bus.send({ from: 'lead', to: 'alice', content: 'a' });
    const { nextOffset } = await bus.peek('alice');
    await expect(bus.ack('alice', nextOffset + 10)).rejects.toThrow(/holds only/);
    await expect(bus.ack('alice', nextOffset - 3)).rejects.toThrow(/not the end of a line/);
    expect(bus.cursor('alice').offset).toBe(0);
  });

  it('concurrent takes never hand out the same message twice', async () => {
    for (let i = 0; i < 20; i++) await bus.send({ from: 'lead', to: 'alice', content: `m${i}` });
    const batches = await Promise.all([bus.take('alice'), bus.take('alice'), bus.take('alice')]);
    const ids = batches.flat().map((m) => m.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  it('leaves a torn last line alone until it is completed', async () => {
    const a = await bus.send({ from: 'lead', to: 'alice', content: 'a' });
    const pending: Message = { id: 'msg_pending', type: 'message', from: 'lead', to: 'alice', content: 'slow', ts: new Date().toISOString() };
    const text = JSON.stringify(pending);
    appendFileSync(bus.inboxFile('alice'), text.slice(0, 20)); // a writer mid-line
    const first = await bus.peek('alice');
    expect(first.messages.map((m) => m.id)).toEqual([a.id]);
    await bus.ack('alice', first.nextOffset);
    expect(await bus.peek('alice')).toMatchObject({ messages: [] });
    appendFileSync(bus.inboxFile('alice'), `${text.slice(20)}\n`); // the writer finishes
    expect((await bus.take('alice')).map((m) => m.id)).toEqual(['msg_pending']);
    expect(warnings()).toEqual([]);
  });

  it("keeps a crashed writer's fragment from swallowing the next message, with one warning", async () => {
    appendFileSync(bus.inboxFile('alice'), '{"id":"msg_torn","type":"mess'); // the writer died here
    const next = await bus.send({ from: 'lead', to: 'alice', content: 'after the crash' });
    expect((await bus.peek('alice')).messages.map((m) => m.id)).toEqual([next.id]);
    expect((await bus.take('alice')).map((m) => m.id)).toEqual([next.id]);
    expect(warnings()).toHaveLength(1); // reported once, though read twice
    expect(warnings()[0]).toMatchObject({ agent: 'alice', inbox: bus.inboxFile('alice'), line: 1 });
    expect(String(warnings()[0]!.message)).toContain('alice.jsonl');
  });

  it('skips a malformed line in the middle with a warning naming the inbox and line', async () => {
    const a = await bus.send({ from: 'lead', to: 'alice', content: 'a' });
    appendFileSync(bus.inboxFile('alice'), 'this is not json\n{"id":"x","type":"nope","from":"a","to":"b","content":"","ts":""}\n');
    const b = await bus.send({ from: 'lead', to: 'alice', content: 'b' });
    expect((await bus.take('alice')).map((m) => m.id)).toEqual([a.id, b.id]);
    expect(warnings().map((w) => [w.line, w.inbox])).toEqual([
      [2, bus.inboxFile('alice')],
      [3, bus.inboxFile('alice')],
    ]);
    expect(String(warnings()[1]!.message)).toContain("unknown message type 'nope'");
  });

  it('skips recently delivered ids when an inbox is truncated under its cursor', async () => {
    await bus.send({ from: 'lead', to: 'alice', content: 'a' });
    const b = await bus.send({ from: 'lead', to: 'alice', content: 'b' });
    expect(await bus.take('alice')).toHaveLength(2);
    // Someone rewrites the file shorter than the cursor, keeping a delivered line.
    writeFileSync(bus.inboxFile('alice'), `${JSON.stringify(b)}\n`);
    expect(await bus.take('alice')).toEqual([]); // re-read from the start; b is in the tail
    expect(warnings().filter((w) => String(w.message).includes('shorter'))).toHaveLength(1);
    const c = await bus.send({ from: 'lead', to: 'alice', content: 'c' });
    expect((await bus.take('alice')).map((m) => m.id)).toEqual([c.id]);
    expect(bus.cursor('alice').offset).toBe(statSync(bus.inboxFile('alice')).size);
  });

  it('keeps only the last DELIVERED_TAIL ids in the cursor', async () => {
    const lines: string[] = [];
    for (let i = 0; i < DELIVERED_TAIL + 5; i++) {
      lines.push(JSON.stringify({ id: `msg_${String(i).padStart(5, '0')}`, type: 'message', from: 'lead', to: 'alice', content: '', ts: '' }));
    }
    writeFileSync(bus.inboxFile('alice'), `${lines.join('\n')}\n`);
    expect(await bus.take('alice')).toHaveLength(DELIVERED_TAIL + 5);
    const tail = bus.cursor('alice').delivered_ids_tail;
    expect(tail).toHaveLength(DELIVERED_TAIL);
    expect(tail[0]).toBe('msg_00005');
    expect(tail.at(-1)).toBe(`msg_${String(DELIVERED_TAIL + 4).padStart(5, '0')}`);
  });

  it('reports a broken cursor file instead of re-delivering everything', async () => {
    await bus.send({ from: 'lead', to: 'alice', content: 'a' });
    writeFileSync(bus.cursorFile('alice'), '{"offset": ');
    await expect(bus.peek('alice')).rejects.toThrow(/alice\.cursor is not valid JSON.*fix or remove/);
  });
});

describe('waiting', () => {
  it('resolves at once when a message is already waiting', async () => {
    await bus.send({ from: 'lead', to: 'alice', content: 'a' });
    await expect(bus.waitForMessage('alice')).resolves.toBeUndefined();
  });

  it('wakes on an in-process send', async () => {
    let woke = false;
    const waiting = bus.waitForMessage('alice').then(() => (woke = true));
    await bus.peek('alice'); // let the waiter check once
    expect(woke).toBe(false);
    const sent = await bus.send({ from: 'lead', to: 'alice', content: 'wake up' });
    await waiting;
    expect((await bus.peek('alice')).messages.map((m) => m.id)).toEqual([sent.id]);
  });

  it('wakes on a send from another process', async () => {
    const sender = await bundleFixture('bus-sender');
    const waiting = bus.waitForMessage('alice');
    const { exited } = runFixture(sender, { inboxDir: bus.inboxDir, to: 'alice', senders: ['lead'], count: 1, knownNames: names });
    await waiting;
    const exit = await exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect((await bus.take('alice')).map((m) => m.content)).toEqual(['lead #0']);
  });

  it('does not resolve for other inboxes, torn fragments or old messages, and rejects on abort', async () => {
    await bus.send({ from: 'lead', to: 'alice', content: 'old' });
    await bus.take('alice');
    const controller = new AbortController();
    let settled = 'pending';
    const waiting = bus.waitForMessage('alice', controller.signal).then(
      () => (settled = 'resolved'),
      (error: Error) => (settled = `rejected: ${error.name}`),
    );
    // Activity that must not wake alice: a torn fragment in her inbox, a message to the lead.
    appendFileSync(bus.inboxFile('alice'), '{"id":"msg_half');
    // The lead's message is written behind the bus's back, so only the directory watcher can wake
    // the lead; it reports alice's file first, so once the lead is awake alice has been re-checked.
    const leadWoke = bus.waitForMessage('lead');
    const forLead: Message = { id: 'msg_raw', type: 'message', from: 'alice', to: 'lead', content: 'hi', ts: new Date().toISOString() };
    appendFileSync(bus.inboxFile('lead'), `${JSON.stringify(forLead)}\n`);
    await leadWoke;
    expect(settled).toBe('pending');
    controller.abort();
    await waiting;
    expect(settled).toBe('rejected: AbortError');
  });

  it('rejects pending waits on close', async () => {
    const waiting = bus.waitForMessage('alice');
    bus.close();
    await expect(waiting).rejects.toThrow(/closed/);
  });
});

describe('message tools', () => {
  const context = (agent: string): ToolContext => ({
    agent,
    workspace: undefined as never,
    signal: new AbortController().signal,
    events: { agent, emit: (type, fields) => hub.emit(agent, type, fields) },
  });

  it('send_message, read_inbox and broadcast go through the bus', async () => {
    const tools = messageTools(bus);
    expect(await tools.readInbox.run({}, context('alice'))).toBe('no new messages');
    expect(await tools.sendMessage.run({ to: 'alice', content: 'hello' }, context('lead'))).toMatch(/^sent to alice \(msg_/);
    await expect(tools.sendMessage.run({ to: 'bob', content: 'x' }, context('lead'))).rejects.toThrow(/known names: lead, alice/);
    const text = (await tools.readInbox.run({}, context('alice'))) as string;
    const lines = text.split('\n');
    expect(lines[0]).toBe('<inbox>');
    expect(lines.at(-1)).toBe('</inbox>');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1]!)).toMatchObject({ type: 'message', from: 'lead', to: 'alice', content: 'hello' });
    expect(await tools.readInbox.run({}, context('alice'))).toBe('no new messages');
    expect(events.some((e) => e.type === 'message_delivered' && e.agent === 'alice')).toBe(true);

    expect(await tools.broadcast.run({ content: 'all hands' }, context('lead'))).toBe('broadcast to 1 teammate: alice');
    expect((await bus.take('alice'))[0]).toMatchObject({ type: 'broadcast', content: 'all hands' });
  });

  it('formatInbox writes one JSON line per message between the tags, each saying who sent it (never taken from the message), without its id', () => {
    const message: Message = { id: 'msg_1', type: 'message', from: 'lead', to: 'alice', content: 'a\nb', ts: 't' };
    const person: Message = { ...message, id: 'msg_2', from: 'user' };
    const forged: Message = { ...message, id: 'msg_3', sender: 'person' };
    expect(formatInbox([message, person, forged])).toBe(
      [
        '<inbox>',
        '{"sender":"agent","type":"message","from":"lead","to":"alice","content":"a\\nb","ts":"t"}',
        '{"sender":"person","type":"message","from":"user","to":"alice","content":"a\\nb","ts":"t"}',
        '{"sender":"agent","type":"message","from":"lead","to":"alice","content":"a\\nb","ts":"t"}',
        '</inbox>',
      ].join('\n'),
    );
  });

  it('read_inbox with deferAck leaves the cursor to the caller', async () => {
    const acks: number[] = [];
    const tools = messageTools(bus, { deferAck: (_agent, offset) => acks.push(offset) });
    await bus.send({ from: 'lead', to: 'alice', content: 'hello' });
    expect(await tools.readInbox.run({}, context('alice'))).toContain('<inbox>');
    expect(await bus.unreadCount('alice')).toBe(1);
    await bus.ack('alice', acks[0]!);
    expect(await bus.unreadCount('alice')).toBe(0);
  });
});
