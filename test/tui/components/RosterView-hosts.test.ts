// /team on a team across hosts (PostgreSQL): where each agent runs, from the host its mirrored
// events carry; a team in one process shows no host column at all.
import { PassThrough } from 'node:stream';
import { render } from 'ink';
import { createElement } from 'react';
import { expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { RosterView } from '../../../src/tui/components/RosterView.js';
import { createConsoleStore, type ConsoleStore } from '../../../src/tui/state/console-store.js';
import { EventBridge } from '../../../src/tui/state/event-bridge.js';
import { notInterruptedNote } from '../../../src/tui/state/interrupt-note.js';

/** The roster as drawn at `width` columns: its text, without colours. */
async function drawn(store: ConsoleStore, width: number): Promise<string> {
  let out = '';
  const stdout = Object.assign(new PassThrough(), { isTTY: false, columns: width, rows: 12 });
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const instance = render(createElement(RosterView, { store, width, height: 10 }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    patchConsole: false,
    debug: true,
  });
  instance.unmount();
  await instance.waitUntilExit();
  return out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}

it('has a host column only when an agent runs elsewhere, and says which', async () => {
  const hub = new EventHub();
  const store = createConsoleStore({ model: 'm', endpoint: '' });
  const bridge = new EventBridge(hub, store);
  hub.emit('lead', 'status', { status: 'idle', role: 'lead', reason: 'waiting for messages' });
  hub.emit('cy', 'status', { status: 'working', role: 'coder', reason: 'task #3' });
  bridge.flush();
  const local = await drawn(store, 140);
  expect(local).toMatch(/^name\s+status\s+task\s+in\/out\s+cache r\/w\s+cost\s+ctx\s+active\s*$/m);
  expect(local).not.toContain('host');

  // As PgEventStore mirrors them: another process's events carry its host.
  hub.emit('ada', 'status', { status: 'working', role: 'coder', reason: 'task #2', host: 'box-2-4411-9f1c2a' } as Parameters<typeof hub.emit<'status'>>[2]);
  bridge.flush();
  const across = await drawn(store, 140);
  expect(across).toMatch(/^name\s+status\s+task\s+in\/out\s+cache r\/w\s+cost\s+ctx\s+active\s+host\s*$/m);
  expect(across).toMatch(/^ada\s+.*working: task #2.*\sbox-2\s*$/m);
  expect(across).toMatch(/^cy\s+.*working: task #3.*\shere\s*$/m);
  expect(across).toMatch(/^lead\s+.*\shere\s*$/m);
  // At 80 columns the host still shows: the cache's counts and the last activity give way to it.
  const narrow = await drawn(store, 80);
  expect(narrow).toMatch(/^name\s+status\s+task\s+in\/out\s+cost\s+ctx\s+host\s*$/m);
  expect(narrow).toMatch(/^ada\s+.*\sbox-2\s*$/m);

  // Two workers on one machine: their whole ids tell them apart.
  hub.emit('bo', 'status', { status: 'working', role: 'coder', reason: 'task #4', host: 'box-2-5120-07aa31' } as Parameters<typeof hub.emit<'status'>>[2]);
  bridge.flush();
  const two = await drawn(store, 160);
  expect(two).toMatch(/^ada\s+.*\sbox-2-4411-9f1c2a\s*$/m);
  expect(two).toMatch(/^bo\s+.*\sbox-2-5120-07aa31\s*$/m);
  bridge.close();
});

it('an interrupt that reaches nobody says why: no turn here, and its host is gone', () => {
  const store = createConsoleStore({ model: 'm', endpoint: '' });
  const hub = new EventHub();
  const bridge = new EventBridge(hub, store);
  hub.emit('ada', 'status', { status: 'working', role: 'coder', host: 'box-2-4411-9f1c2a' } as Parameters<typeof hub.emit<'status'>>[2]);
  hub.emit('cy', 'status', { status: 'idle', role: 'coder' });
  bridge.flush();
  const { agents } = store.getState();
  expect(notInterruptedNote('ada', agents.ada)).toBe('ada is in no turn here, and its host box-2 is not live to ask');
  expect(notInterruptedNote('cy', agents.cy)).toBe('cy is not in a turn');
  bridge.close();
});
