// What an agent stores for other agents to read — a message, a task — holds no registered secret,
// whichever agent wrote it (an external one's tool results never passed through huddle's scrub).
import { expect, it } from 'vitest';
import { registerSecret } from '../../src/runtime/secrets.js';
import { composeMessage } from '../../src/runtime/store/bus-rules.js';
import { planCreate } from '../../src/runtime/store/board/rules.js';
import { planUpdate } from '../../src/runtime/store/board/update.js';
import { viewOf } from '../../src/runtime/store/board/view.js';

const SECRET = 'pw-Stored-5150-secret';

it('messages and tasks are stored scrubbed', () => {
  registerSecret(SECRET);
  const message = composeMessage({ from: 'alice', to: 'lead', content: `the password is ${SECRET}`, plan: `use ${SECRET}` } as never, ['lead', 'alice']);
  expect(JSON.stringify(message)).not.toContain(SECRET);
  expect(message.content).toBe('the password is [redacted]');
  const { task } = planCreate(
    { subject: `log in with ${SECRET}`, description: Buffer.from(SECRET).toString('base64') },
    1,
    new Date().toISOString(),
    viewOf([]),
  );
  expect(task.subject).toBe('log in with [redacted]');
  expect(JSON.stringify(task)).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 16));
  const updated = planUpdate(task, { description: `now ${SECRET}` } as never, 'lead', viewOf([task]));
  expect(JSON.stringify(updated.task)).not.toContain(SECRET);
});

it("a tool result's text blocks (an MCP server's) are scrubbed like its content", async () => {
  const { z } = await import('zod');
  const { ToolRegistry } = await import('../../src/runtime/tools/registry.js');
  const { makeToolContext } = await import('../helpers/tool-context.js');
  registerSecret(SECRET);
  const registry = new ToolRegistry([
    {
      name: 'leaky',
      description: 'prints a secret',
      input: z.object({}),
      run: async () => ({ content: `text ${SECRET}`, blocks: [{ type: 'text' as const, text: `block ${SECRET}` }] }),
    },
  ]);
  const result = await registry.run('leaky', {}, makeToolContext(process.cwd()));
  expect(JSON.stringify(result)).not.toContain(SECRET);
  expect(result.blocks).toEqual([{ type: 'text', text: 'block [redacted]' }]);
});

it("a gateway's ANTHROPIC_CUSTOM_HEADERS values are redacted like the key once huddle's config is read", async () => {
  const { resolveConfig } = await import('../../src/runtime/config.js');
  const { scrub } = await import('../../src/runtime/secrets.js');
  const value = 'gw-Header-7341-secret';
  expect(scrub(`sent ${value}`)).toBe(`sent ${value}`);
  resolveConfig({}, { ANTHROPIC_API_KEY: 'sk-ant-config-0123456789', ANTHROPIC_CUSTOM_HEADERS: `X-Gateway-Key: ${value}\nX-Team: a` });
  expect(scrub(`sent ${value}`)).toBe('sent [redacted]');
});

it("a password or a token in ANTHROPIC_BASE_URL is redacted like the key once huddle's config is read", async () => {
  const { resolveConfig } = await import('../../src/runtime/config.js');
  const { scrub } = await import('../../src/runtime/secrets.js');
  const password = 'gw-Pass/7342-secret';
  const token = 'gw-Token-7343-secret';
  expect(scrub(`sent ${password} ${token}`)).toBe(`sent ${password} ${token}`);
  resolveConfig(
    {},
    { ANTHROPIC_API_KEY: 'sk-ant-config-0123456789', ANTHROPIC_BASE_URL: `https://team:${encodeURIComponent(password)}@gateway.example/v1?key=${token}` },
  );
  expect(scrub(`sent ${password} ${token} ${encodeURIComponent(password)}`)).toBe('sent [redacted] [redacted] [redacted]');
});
