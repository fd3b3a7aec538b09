// Editing a plan from the needs-you queue in a real terminal (80×24): a plan-mode teammate's plan waits for the
// person, `e` hands the terminal to $EDITOR (here a script that rewrites the file) and takes it back, and `y`
// approves the person's text, which is what the teammate is told to follow.
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/runtime/store/bus.js';
import { useConsoles } from '../../helpers/console-pty.ts';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest } from '../../helpers/fake-api.ts';
import { inboxMessages, lastUserTexts } from '../../helpers/team-harness.ts';

const CTRL_Y = '\x19';

function answer(request: RecordedRequest): Message | undefined {
  return inboxMessages(lastUserTexts(request)).findLast((m) => m.type === 'plan_approval_response');
}

describe('a plan edited from the needs-you queue', () => {
  let fake: FakeApi;
  let dir: string;

  beforeEach(async () => {
    fake = await startFakeApi();
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-plan-edit-pty-')));
  });

  afterEach(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // After the hooks above: vitest runs after-hooks in reverse, so the console closes before its fake and workspace go.
  const start = useConsoles();

  it('e opens the plan in $EDITOR, the console comes back whole, y approves the edited plan', async () => {
    const editor = path.join(dir, 'edit-plan.sh');
    writeFileSync(editor, `#!/bin/sh\nprintf 'Write HELLO.txt in capitals.\\n' > "$1"\n`);
    chmodSync(editor, 0o755);
    fake.respond((request) => {
      if (request.agent === 'lead')
        return request.body.messages.length === 1
          ? reply(toolUse('spawn_teammate', { name: 'carol', role: 'coder', prompt: 'Plan the greeting.', plan_mode_required: true }))
          : replyText('carol is on it');
      if (request.agent !== 'carol') return undefined;
      return answer(request)?.approve ? reply(toolUse('idle', {})) : reply(toolUse('plan_approval', { plan: 'Write hello.txt.' }));
    });
    const tty = await start({ cols: 80, rows: 24, fake, workspace: dir, env: { HUDDLE_PLAN_APPROVAL: 'person', EDITOR: editor } });
    await tty.waitForText('ask the lead');
    await tty.type('greet');
    tty.press('enter');
    await tty.waitForText('needs you: 1');
    tty.write(CTRL_Y);
    await tty.waitForText('Needs you (1 waiting)');
    tty.write('e');
    // The console redraws itself after the editor in a few frames: wait for the whole screen, not its first line.
    let screen = await tty.waitForScreen(
      (s) => s.includes('now holds your edit') && s.includes('Needs you (1 waiting)') && s.includes('Write HELLO.txt in capitals.'),
    );
    expect(await tty.driver.bufferType()).toBe('alternate');
    expect(screen).toContain('Needs you (1 waiting)');
    tty.write('y');
    screen = await tty.waitForText('Needs you (0 waiting)');
    const told = await waitForTold(fake);
    expect(answer(told)).toMatchObject({ approve: true, plan: 'Write HELLO.txt in capitals.\n' });
    expect(lastUserTexts(told).join('\n')).toContain("Your plan was approved with the person's edits");
  }, 60_000);
});

async function waitForTold(fake: FakeApi): Promise<RecordedRequest> {
  for (let seen = fake.requests.length; ; seen = fake.requests.length) {
    const told = fake.requests.find((r) => r.agent === 'carol' && answer(r));
    if (told) return told;
    await fake.waitForRequests(seen + 1, 15_000);
  }
}
