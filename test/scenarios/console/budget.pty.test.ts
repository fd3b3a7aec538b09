// A budget stop in a real terminal: the lead reaches the team's dollar budget, the status bar
// says `needs you: 1`, Ctrl+Y shows the budget stop, `y` extends it and the run goes on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCliToTemp } from '../../helpers/build-cli.ts';
import { useConsoles } from '../../helpers/console-pty.ts';
import { reply, replyText, toolUse } from '../../helpers/fake-api.ts';

const CTRL_Y = '\x19';
// claude-sonnet-4-6: $3 per million input tokens, so 100k input tokens cost $0.30 a call.
const DEAR = { input_tokens: 100_000, output_tokens: 1 };

describe('a budget stop in the console', () => {
  let cli: string;
  let cleanupCli: (() => void) | undefined;
  const start = useConsoles();

  beforeAll(async () => {
    const built = await buildCliToTemp();
    cleanupCli = built.cleanup;
    cli = built.cli;
  }, 60_000);

  afterAll(() => cleanupCli?.());

  it('needs you: 1 → Ctrl+Y → y extends the budget → the lead finishes', async () => {
    const tty = await start({ cli, cols: 220, args: ['--budget-usd', '0.5'] });
    const fake = tty.fake;
    fake.script(
      'lead',
      Object.assign(reply(toolUse('task_list', {})), { usage: DEAR }),
      Object.assign(reply(toolUse('task_list', {})), { usage: DEAR }),
      replyText('Finished within the new budget.'),
    );
    await tty.waitForText('ask the lead');
    await tty.type('spend some money');
    tty.press('enter');

    let screen = await tty.waitForText('needs you: 1');
    expect(fake.requests.filter((r) => r.agent === 'lead')).toHaveLength(2); // paused before the third call
    tty.write(CTRL_Y);
    screen = await tty.waitForText('Needs you (1 waiting)');
    expect(screen).toMatch(/› lead\s+budget team budget: \$0\.60 of \$0\.50/);
    expect(screen).toContain('extending adds $0.50 · a also extends');
    tty.write('y');
    await tty.waitForText('Needs you (0 waiting)');
    tty.press('escape');
    screen = await tty.waitForText('Finished within the new budget.');
    expect(screen).not.toContain('needs you:');
    expect(fake.requests.filter((r) => r.agent === 'lead')).toHaveLength(3);
  }, 30_000);
});
