// A prefix shared across the team (docs/cost.md#a-prefix-shared-by-the-team): teammates of one role send
// byte-identical tools and a byte-identical first system block (marked for the prompt cache), their own
// name and workspace after it; a sibling's first call waits until the first one's response began (its
// cache write), then reads that prefix from the cache. The fake API keeps the cache by the API's rules.
import { afterEach, describe, expect, it } from 'vitest';
import { replyText, type Scripted } from '../../helpers/fake-api.ts';
import { openTeamHarness, systemBlocks, type TeamHarness } from '../../helpers/team-harness.ts';
import { RunRecorder } from '../../../src/runtime/record/run-record.ts';
import type { HuddleEvent } from '../../../src/runtime/events/events.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('a prefix shared across the team', () => {
  it("a sibling's first call waits for the first one's cache write, then reads the byte-identical prefix", async () => {
    const h = (harness = await openTeamHarness());
    let bobSeenBeforeAnnAnswered: boolean | undefined;
    h.fake.respond(async (request): Promise<Scripted | undefined> => {
      if (request.agent !== 'ann' || h.requestsOf('ann').length > 1) return replyText('Ready.');
      // Hold ann's first call until bob is spawned and says it waits for the shared cache.
      await h.waitFor('bob to wait for the shared prefix', () =>
        h.events.some((e) => e.agent === 'bob' && e.type === 'status' && e.reason === 'waiting for a teammate to write the shared prompt cache'),
      );
      bobSeenBeforeAnnAnswered = h.requestsOf('bob').length > 0;
      return replyText('Ready.');
    });
    h.team.start();
    await h.spawn('ann', 'Wait for tasks.');
    await h.waitFor('ann to ask', () => h.requestsOf('ann').length > 0);
    await h.spawn('bob', 'Wait for tasks.');
    await Promise.all([h.waitForStatus('ann', 'idle'), h.waitForStatus('bob', 'idle')]);

    // bob's first request reached the API only after ann's response had begun.
    expect(bobSeenBeforeAnnAnswered).toBe(false);
    const ann = h.requestsOf('ann')[0]!;
    const bob = h.requestsOf('bob')[0]!;
    expect(bob.at).toBeGreaterThanOrEqual(ann.at);

    // Byte-identical up to the breakpoint: the tools, and the first system block with its mark.
    expect(JSON.stringify(bob.body.tools)).toBe(JSON.stringify(ann.body.tools));
    const [annShared, annOwn] = systemBlocks(ann);
    const [bobShared, bobOwn] = systemBlocks(bob);
    expect(JSON.stringify(bobShared)).toBe(JSON.stringify(annShared));
    expect(annShared!.cache_control).toEqual({ type: 'ephemeral' });
    // Everything of the agent's own comes after it.
    expect(annOwn!.text).toMatch(/^You are 'ann', role: coder, team: /);
    expect(bobOwn!.text).toMatch(/^You are 'bob', role: coder, team: /);
    expect(annShared!.text).not.toMatch(/\bann\b/);

    // Billed as the API would: ann wrote the prefix, bob read it on his first call.
    expect(ann.cache!.written).toBeGreaterThan(0);
    expect(bob.cache!.read).toBeGreaterThan(0);

    // The usage of bob's first call says so, and the run record counts it as read across agents.
    const firstCall = h.events.find((e) => e.agent === 'bob' && e.type === 'usage' && e.first_call === true);
    expect(firstCall?.cache_read_input_tokens).toBe(bob.cache!.read);
    const recorder = new RunRecorder();
    for (const event of h.events) recorder.onEvent(event as HuddleEvent);
    const record = recorder.build({ tasks: [] });
    expect(record.cost.agents['bob']!.shared_cache_read_input_tokens).toBe(bob.cache!.read);
    expect(record.tokens.shared_cache_read).toBeGreaterThanOrEqual(bob.cache!.read);
  });

  it("the tools every role has come first, marked: the lead's first call reads them from a teammate's write", async () => {
    const h = (harness = await openTeamHarness());
    h.fake.respond(() => replyText('Ready.'));
    h.team.start();
    await h.spawn('ann', 'Wait for tasks.');
    await h.waitForStatus('ann', 'idle');
    h.team.lead.prompt('How is it going?');
    await h.waitForEvent('the lead answered', (e) => e.agent === 'lead' && e.type === 'text' && e.text === 'Ready.');

    const ann = h.requestsOf('ann')[0]!;
    const lead = h.requestsOf('lead')[0]!;
    const marked = (tools: Array<{ name: string; cache_control?: unknown }>) => tools.findIndex((tool) => tool.cache_control);
    const shared = marked(ann.body.tools);
    expect(shared, "the mark sits on explore, before what is the role's own").toBe(ann.body.tools.findIndex((t: { name: string }) => t.name === 'explore'));
    expect(marked(lead.body.tools)).toBe(shared);
    // Byte for byte the same block of tools, mark included; what differs comes after it.
    expect(JSON.stringify(lead.body.tools.slice(0, shared + 1))).toBe(JSON.stringify(ann.body.tools.slice(0, shared + 1)));
    expect(ann.body.tools.slice(shared + 1).map((t: { name: string }) => t.name)).toEqual(['idle', 'shutdown_response']);
    expect(lead.body.tools.slice(shared + 1).map((t: { name: string }) => t.name)).toContain('spawn_teammate');

    // ann wrote it; the lead, of another role, read it on its first call and wrote only its own part.
    expect(ann.cache!.read).toBe(0);
    expect(lead.cache!.read).toBeGreaterThan(0);
    expect(lead.cache!.written).toBeLessThan(ann.cache!.written);
  });

  it('with timeouts.cacheWarmupMs 0 a sibling does not wait', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_CACHE_WARMUP_MS: '0' } }));
    h.fake.respond(async (request): Promise<Scripted | undefined> => {
      if (request.agent !== 'ann' || h.requestsOf('ann').length > 1) return replyText('Ready.');
      // ann's first call is answered only once bob's has arrived: bob did not wait for it.
      await h.waitFor('bob to ask', () => h.requestsOf('bob').length > 0);
      return replyText('Ready.');
    });
    h.team.start();
    await h.spawn('ann', 'Wait for tasks.');
    await h.waitFor('ann to ask', () => h.requestsOf('ann').length > 0);
    await h.spawn('bob', 'Wait for tasks.');
    await Promise.all([h.waitForStatus('ann', 'idle'), h.waitForStatus('bob', 'idle')]);
    expect(h.events.some((e) => e.type === 'status' && e.reason === 'waiting for a teammate to write the shared prompt cache')).toBe(false);
  });
});
