// Old inbox turns in the lead's requests (docs/contract.md#injected-turns): agents' reports are shortened
// to `<inbox-handled>`; a turn that carries the person's words, huddle's notice or a protocol message (a
// plan still to answer) is sent whole.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { collapseHandledReports, collapseInbox } from '../../../src/agents/loop/handled-reports.js';

const inbox = (...messages: object[]) => `<inbox>\n${messages.map((m) => JSON.stringify(m)).join('\n')}\n</inbox>`;
const report = { sender: 'agent', from: 'ann', to: 'lead', type: 'message', content: `done: ${'a long report '.repeat(40)}` };

describe('handled reports', () => {
  it("shortens an agents' report turn to one line per message", () => {
    const short = collapseInbox(inbox(report));
    expect(short).toMatch(/^<inbox-handled>\n\{"sender":"agent","from":"ann","content":"done: a long report/);
    expect(short!.length).toBeLessThan(260);
  });

  it("keeps whole a turn with the person's words, huddle's notice or a plan to answer", () => {
    expect(collapseInbox(inbox(report, { sender: 'person', from: 'user', to: 'lead', type: 'message', content: 'use postgres' }))).toBeUndefined();
    expect(collapseInbox(inbox({ sender: 'huddle', from: 'huddle', to: 'lead', type: 'message', content: 'reviewed, ship it' }))).toBeUndefined();
    expect(collapseInbox(inbox({ sender: 'agent', from: 'bob', to: 'lead', type: 'plan_approval_request', content: 'plan' }))).toBeUndefined();
  });

  it('leaves the last turns whole and shortens older report turns in the request', () => {
    const turns: MessageParam[] = [];
    for (let i = 0; i < 24; i++) {
      turns.push({ role: 'user', content: inbox({ ...report, content: `report ${i} ${'x'.repeat(400)}` }) });
      turns.push({ role: 'assistant', content: 'ok' });
    }
    const sent = collapseHandledReports(turns);
    const texts = sent
      .filter((m) => m.role === 'user')
      .map((m) => (typeof m.content === 'string' ? m.content : m.content.map((block) => (block.type === 'text' ? block.text : '')).join('')));
    expect(texts[0]).toMatch(/^<inbox-handled>/);
    expect(texts.at(-1)).toMatch(/^<inbox>/);
    expect(texts.slice(-4).every((t) => t.startsWith('<inbox>'))).toBe(true);
  });
});
