// A budget stop in a real terminal: the lead reaches the team's dollar budget, the status bar
// says `needs you: 1`, Ctrl+Y shows the budget stop, `y` extends it and the run goes on.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCliToTemp } from '../../helpers/build-cli.ts';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.ts';
import type { PtyDriver as PtyDriverType } from '../../helpers/pty-driver.ts';

const CTRL_Y = '\x19';
// claude-sonnet-4-6: $3 per million input tokens, so 100k input tokens cost $0.30 a call.
const DEAR = { input_tokens: 100_000, output_tokens: 1 };

describe('a budget stop in the console', () => {
  let fake: FakeApi;
  let dir: string;
  let driver: PtyDriverType | undefined;
  let cleanupCli: (() => void) | undefined;
  let PtyDriver: typeof PtyDriverType;
  let KEYS: typeof import('../../helpers/pty-driver.ts').KEYS;

  beforeAll(async () => {
    const built = await buildCliToTemp();
    cleanupCli = built.cleanup;
    process.env.HUDDLE_TEST_CLI = built.cli; // read when pty-driver.ts is first imported
    ({ PtyDriver, KEYS } = await import('../../helpers/pty-driver.ts'));
    fake = await startFakeApi();
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-budget-pty-')));
  }, 60_000);

  afterAll(async () => {
    await driver?.kill();
    await fake?.close();
    cleanupCli?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('needs you: 1 → Ctrl+Y → y extends the budget → the lead finishes', async () => {
    fake.script(
      'lead',
      Object.assign(reply(toolUse('task_list', {})), { usage: DEAR }),
      Object.assign(reply(toolUse('task_list', {})), { usage: DEAR }),
      replyText('Finished within the new budget.'),
    );
    driver = new PtyDriver({
      cwd: dir,
      cols: 220,
      args: ['--budget-usd', '0.5'],
      env: { ANTHROPIC_API_KEY: 'sk-test-pty-0123456789', ANTHROPIC_BASE_URL: fake.url, HUDDLE_RETRY_BASE_MS: '5' },
    });
    const tty = driver;
    await tty.waitFor('ask the lead');
    await tty.type('spend some money');
    tty.write(KEYS.enter);

    let screen = await tty.waitFor('needs you: 1');
    expect(fake.requests.filter((r) => r.agent === 'lead')).toHaveLength(2); // paused before the third call
    tty.write(CTRL_Y);
    screen = await tty.waitFor('Needs you (1 waiting)');
    expect(screen).toMatch(/› lead\s+budget team budget: \$0\.60 of \$0\.50/);
    expect(screen).toContain('y extends by $0.50, n stops lead');
    tty.write('y');
    await tty.waitFor('Needs you (0 waiting)');
    tty.write(KEYS.escape);
    screen = await tty.waitFor('Finished within the new budget.');
    expect(screen).not.toContain('needs you:');
    expect(fake.requests.filter((r) => r.agent === 'lead')).toHaveLength(3);
  }, 30_000);
});
