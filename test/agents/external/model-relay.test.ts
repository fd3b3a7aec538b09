// huddle's model relay (agents/external/model-relay.ts): Claude Code gets a local endpoint and a
// stand-in key; the relay swaps in the real key and streams the answer back. A stand-in it did not
// grant, or no longer grants, gets 401 and reaches nothing; the real key never goes back to the caller.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelGrant } from '../../../src/agents/external/model-relay.js';
import { replyText, startFakeApi, type FakeApi } from '../../helpers/fake-api.js';

const KEY = 'sk-test-relay-0123456789abcdef';
let fake: FakeApi;
beforeEach(async () => {
  fake = await startFakeApi();
});
afterEach(async () => {
  await fake.close();
});

async function ask(url: string, headers: Record<string, string>, stream = false): Promise<Response> {
  return fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify({
      model: 'claude-test',
      max_tokens: 16,
      stream,
      system: "You are 'alice', role: coder, team: t.",
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
}

describe('the model relay', () => {
  it('swaps the stand-in for the real key, streams the answer, and refuses a stand-in it does not grant', async () => {
    fake.script('alice', replyText('hello through the relay'));
    const grant = new ModelGrant({ apiKey: KEY, baseURL: fake.url });
    const lease = grant.open();
    const vars = await grant.variables();
    expect(vars.ANTHROPIC_API_KEY).toMatch(/^huddle-relay-[0-9a-f]{48}$/);
    expect(vars.ANTHROPIC_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const answer = await ask(vars.ANTHROPIC_BASE_URL!, { 'x-api-key': vars.ANTHROPIC_API_KEY! });
    expect(answer.status).toBe(200);
    const body = await answer.text();
    expect(body).toContain('hello through the relay');
    expect(body).not.toContain(KEY);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.headers['x-api-key']).toBe(KEY);

    const forged = await ask(vars.ANTHROPIC_BASE_URL!, { 'x-api-key': 'huddle-relay-forged' });
    expect(forged.status).toBe(401);
    await grant.close(lease);
    const revoked = await ask(vars.ANTHROPIC_BASE_URL!, { 'x-api-key': vars.ANTHROPIC_API_KEY! });
    expect(revoked.status).toBe(401);
    expect(fake.requests).toHaveLength(1);
  });

  it('passes a bearer token as a bearer token, and a stream as a stream', async () => {
    fake.script('alice', replyText('hello, bearer'));
    const grant = new ModelGrant({ authToken: 'tok-test-relay-0123456789', baseURL: fake.url });
    const lease = grant.open();
    const vars = await grant.variables();
    expect(vars.ANTHROPIC_AUTH_TOKEN).toMatch(/^huddle-relay-/);
    expect(vars.ANTHROPIC_API_KEY).toBeUndefined();
    const answer = await ask(vars.ANTHROPIC_BASE_URL!, { authorization: `Bearer ${vars.ANTHROPIC_AUTH_TOKEN}` }, true);
    const events = await answer.text();
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    expect(events).toContain('event: message_stop');
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer tok-test-relay-0123456789');
    await grant.close(lease);
  });

  it("adds the gateway's ANTHROPIC_CUSTOM_HEADERS itself (the CLI never sees the variable), and they never replace the key", async () => {
    fake.script('alice', replyText('hello, gateway'));
    process.env.ANTHROPIC_CUSTOM_HEADERS = 'X-Gateway-Key: gateway-secret-5\nX-Api-Key: not-the-key';
    const grant = new ModelGrant({ apiKey: KEY, baseURL: fake.url });
    const lease = grant.open();
    try {
      const vars = await grant.variables();
      expect(Object.values(vars).join(' ')).not.toContain('gateway-secret-5');
      const answer = await ask(vars.ANTHROPIC_BASE_URL!, { 'x-api-key': vars.ANTHROPIC_API_KEY! });
      expect(answer.status).toBe(200);
      expect(fake.requests[0]!.headers['x-gateway-key']).toBe('gateway-secret-5');
      expect(fake.requests[0]!.headers['x-api-key']).toBe(KEY);
    } finally {
      delete process.env.ANTHROPIC_CUSTOM_HEADERS;
      await grant.close(lease);
    }
  });
});
