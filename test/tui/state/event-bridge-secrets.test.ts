// The screen shows no registered secret: a token that arrives whole (a tool result, a warning) and
// one the model streams in pieces split across flushes are both [redacted] in the console's state.
import { expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { registerSecret } from '../../../src/runtime/secrets.js';
import { createConsoleStore } from '../../../src/tui/state/console-store.js';
import { EventBridge } from '../../../src/tui/state/event-bridge.js';

const TOKEN = 'ghp_SCREENTOKEN0123456789abcdef';

it('registered secrets never reach the console state, whole or streamed in pieces', () => {
  registerSecret(TOKEN);
  const hub = new EventHub();
  const store = createConsoleStore({ model: 'm', endpoint: '' });
  const bridge = new EventBridge(hub, store);
  hub.emit('lead', 'text_delta', { text: `the token is ${TOKEN.slice(0, 12)}` });
  bridge.flush();
  hub.emit('lead', 'text_delta', { text: `${TOKEN.slice(12)} ok` });
  bridge.flush();
  hub.emit('lead', 'tool_call', { id: 't1', name: 'bash', input: { command: 'env' }, summary: 'env' });
  hub.emit('lead', 'tool_result', { id: 't1', name: 'bash', ok: true, content: `GH_TOKEN=${TOKEN}`, duration_ms: 1 });
  hub.emit('huddle', 'warning', { message: `cannot use ${TOKEN}` });
  bridge.close();
  const shown = JSON.stringify(store.getState());
  expect(shown).not.toContain(TOKEN);
  expect(shown).toContain('the token is [redacted] ok');
  expect(shown).toContain('GH_TOKEN=[redacted]');
});
