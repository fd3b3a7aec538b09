// The caching rules the fake API applies (prompt-cache.ts): writes at breakpoints of at least
// 1,024 tokens, reads of the longest earlier-written prefix within 20 blocks before a breakpoint,
// at most 4 breakpoints, a 5-minute TTL; and the fake reporting them through the real SDK.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { billedInput, flattenRequest, PromptCache, tokensOf } from './prompt-cache.ts';
import { replyText, startFakeApi, type FakeApi } from './fake-api.ts';

const EPHEMERAL = { type: 'ephemeral' } as const;
/** A text block of about `tokens` tokens (4 characters each). */
const textOf = (tokens: number, tag: string) => ({ type: 'text', text: `${tag}:`.padEnd(tokens * 4 - 30, 'x') });
const marked = <T extends object>(block: T) => ({ ...block, cache_control: EPHEMERAL });

function conversation(turns: number, options: { markLast?: boolean; system?: boolean } = {}) {
  const messages: Array<{ role: string; content: unknown[] }> = [];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: [textOf(200, `user ${i}`)] });
    messages.push({ role: 'assistant', content: [textOf(100, `assistant ${i}`)] });
  }
  messages.push({ role: 'user', content: [textOf(200, `user ${turns}`)] });
  if (options.markLast) {
    const last = messages.at(-1)!;
    last.content = [marked(last.content[0] as object)];
  }
  const system = options.system === false ? [textOf(1500, 'system')] : [marked(textOf(1500, 'system'))];
  return { model: 'claude-test', system, messages };
}

describe('prompt caching rules', () => {
  it('counts every block once, without its cache_control', () => {
    const plain = { model: 'm', system: 'sys', messages: [{ role: 'user', content: 'hi' }] };
    const markedBody = {
      model: 'm',
      system: [marked({ type: 'text', text: 'sys' })],
      messages: [{ role: 'user', content: [marked({ type: 'text', text: 'hi' })] }],
    };
    const a = flattenRequest(plain);
    const b = flattenRequest(markedBody);
    expect(a.blocks.map((x) => x.tokens)).toEqual(b.blocks.map((x) => x.tokens));
    expect(a.hashes).toEqual(b.hashes);
    expect(b.blocks.map((x) => x.breakpoint)).toEqual([true, true]);
  });

  it('writes at a breakpoint of at least 1,024 tokens, then reads it', () => {
    const cache = new PromptCache();
    const body = conversation(0);
    const first = cache.account(body);
    expect(first.read).toBe(0);
    expect(first.written).toBe(tokensOf(body.system[0] && { type: 'text', text: (body.system[0] as { text: string }).text }));
    expect(first.uncached).toBe(first.total - first.written);
    const second = cache.account(body);
    expect(second.read).toBe(first.written);
    expect(second.written).toBe(0);
  });

  it('does not write a prefix under the minimum', () => {
    const cache = new PromptCache();
    const body = { model: 'm', system: [marked(textOf(500, 'small'))], messages: [{ role: 'user', content: 'hi' }] };
    expect(cache.account(body).written).toBe(0);
    expect(cache.account(body).read).toBe(0);
    expect(new PromptCache({ minTokens: 100 }).account(body).written).toBeGreaterThan(0);
  });

  it('a rolling breakpoint on the last message reads the previous request and writes only the new turn', () => {
    const cache = new PromptCache();
    const one = conversation(1, { markLast: true });
    const first = cache.account(one);
    expect(first.written).toBe(first.total);
    const two = conversation(2, { markLast: true });
    const second = cache.account(two);
    expect(second.read).toBe(first.total);
    expect(second.written).toBe(second.total - first.total);
    expect(second.uncached).toBe(0);
  });

  it('reads only within 20 blocks before a breakpoint', () => {
    const cache = new PromptCache();
    const base = conversation(0, { markLast: true });
    const written = cache.account(base).written;
    expect(written).toBeGreaterThan(0);
    // 21 more blocks after the written prefix, breakpoint on the last: the earlier write is 21 blocks back.
    const far = structuredClone(base);
    (far.messages[0]!.content[0] as Record<string, unknown>).cache_control = undefined;
    delete (far.messages[0]!.content[0] as Record<string, unknown>).cache_control;
    far.messages.push({ role: 'assistant', content: Array.from({ length: 20 }, (_, i) => textOf(10, `a${i}`)) });
    far.messages.push({ role: 'user', content: [marked(textOf(10, 'last'))] });
    const missed = new PromptCache();
    missed.account(base);
    const outcome = missed.account(far);
    // Only the system breakpoint's prefix (1,500 tokens, written by the first request) is found.
    expect(outcome.read).toBe(tokensOf((base.system[0] as { text: string }) && { type: 'text', text: (base.system[0] as { text: string }).text }));
    // One block fewer, and the earlier write is within reach.
    const near = structuredClone(far);
    near.messages[1]!.content.pop();
    const hit = new PromptCache();
    hit.account(base);
    expect(hit.account(near).read).toBe(written);
  });

  it('refuses more than 4 breakpoints', () => {
    const body = conversation(3);
    for (const message of body.messages) message.content = message.content.map((block) => marked(block as object));
    expect(() => new PromptCache().account(body)).toThrow(/maximum of 4 blocks with cache_control/);
  });

  it('forgets an entry 5 minutes after its last use', () => {
    let now = 0;
    const cache = new PromptCache({ now: () => now });
    const body = conversation(0);
    cache.account(body);
    now += 4 * 60_000;
    expect(cache.account(body).read).toBeGreaterThan(0); // a read refreshes it
    now += 4 * 60_000;
    expect(cache.account(body).read).toBeGreaterThan(0);
    now += 5 * 60_000 + 1;
    expect(cache.account(body).read).toBe(0);
  });

  it('a changed early block invalidates everything after it', () => {
    const cache = new PromptCache();
    const body = conversation(2, { markLast: true });
    cache.account(body);
    const changed = structuredClone(body);
    (changed.messages[1]!.content[0] as { text: string }).text += ' edited';
    const outcome = cache.account(changed);
    // Only the system prefix survives (the message breakpoint finds nothing within reach).
    expect(outcome.read).toBe(tokensOf({ type: 'text', text: (body.system[0] as { text: string }).text }));
  });

  it('billed input is input + 1.25 × written + 0.1 × read', () => {
    expect(billedInput({ uncached: 100, written: 1000, read: 10_000 })).toBe(100 + 1250 + 1000);
  });
});

describe('the fake API bills cache reads and writes like the real one', () => {
  let fake: FakeApi | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('reports cache_creation and cache_read tokens in the streamed usage, and 400 for 5 breakpoints', async () => {
    fake = await startFakeApi();
    fake.respond(() => replyText('ok'));
    const client = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 0, logLevel: 'off' });
    const system = [{ type: 'text' as const, text: 'You are a test. '.padEnd(8000, 'y'), cache_control: EPHEMERAL }];
    const ask = () => client.messages.stream({ model: 'claude-test', max_tokens: 16, system, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    const first = await ask();
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThanOrEqual(1024);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    const second = await ask();
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBe(first.usage.input_tokens);
    expect(fake.requests[1]!.cache).toMatchObject({ read: first.usage.cache_creation_input_tokens, written: 0 });

    const five = Array.from({ length: 5 }, (_, i) => ({ type: 'text' as const, text: `block ${i}`, cache_control: EPHEMERAL }));
    await expect(
      client.messages.create({ model: 'claude-test', max_tokens: 16, system: five, messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('scripted usage is reported as scripted; caching can be off', async () => {
    fake = await startFakeApi({ caching: false });
    fake.enqueue({ kind: 'message', content: [{ type: 'text', text: 'x' }], usage: { input_tokens: 7, output_tokens: 3 } });
    fake.enqueue(replyText('y'));
    const client = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 0, logLevel: 'off' });
    const system = [{ type: 'text' as const, text: ''.padEnd(8000, 'y'), cache_control: EPHEMERAL }];
    const first = await client.messages.create({ model: 'm', max_tokens: 16, system, messages: [{ role: 'user', content: 'hi' }] });
    expect(first.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    const second = await client.messages.create({ model: 'm', max_tokens: 16, system, messages: [{ role: 'user', content: 'hi' }] });
    expect(second.usage.cache_read_input_tokens).toBe(0);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
  });
});
