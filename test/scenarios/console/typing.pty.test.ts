// Fast typing in a real terminal: a whole line and Enter in one write, several writes sent without
// waiting, keys and Enter in one read. The built CLI under node-pty, the screen through
// @xterm/headless, and the fake Messages API telling what reached the lead.
import { describe, expect, it } from 'vitest';
import { KEYS, useConsoles } from '../../helpers/console-pty.js';
import { replyText, type FakeApi } from '../../helpers/fake-api.js';
import { lastUserTexts } from '../../helpers/team-harness.js';

const [BACKSPACE, LEFT, HOME, END] = ['\x7f', '\x1b[D', '\x1b[H', '\x1b[F'];

const start = useConsoles();
let fake: FakeApi;

/** What the person's prompts to the lead were, one per model request, in order. */
function promptsToLead(): string[] {
  return fake.requests.filter((r) => r.agent === 'lead').map((r) => lastUserTexts(r).join('\n'));
}

describe.each([
  [80, 24],
  [160, 45],
])('typing fast at %i×%i', (cols, rows) => {
  it('applies every key in order, whether a line comes in one write or in many', async () => {
    const tty = await start({ cols, rows });
    fake = tty.fake;
    fake.script('lead', replyText('Reply one.'), replyText('Reply two.'), replyText('Reply three.'));
    await tty.waitForText('ask the lead');

    // A whole line and Enter in one write (one read for the console).
    tty.write('a whole line in one write\r');
    // The reply shows while the turn still ends (the input line shows its progress); then the input is empty again.
    let screen = await tty.waitForScreen((s) => s.includes('Reply one.') && s.includes('ask the lead'));
    expect(screen).toContain('› a whole line in one write');
    expect(promptsToLead()).toEqual(['a whole line in one write']);

    // Several writes without waiting between them, editing as they go: "second" → "secon" →
    // "seconD" → cursor one left → "secon-D", then Home, "2 ", End, "!".
    for (const chunk of ['sec', 'ond', BACKSPACE, 'D', LEFT, '-', HOME, '2 ', END, '!', KEYS.enter]) tty.write(chunk);
    screen = await tty.waitForText('Reply two.');
    expect(screen).toContain('› 2 secon-D!');
    expect(promptsToLead()).toEqual(['a whole line in one write', '2 secon-D!']);

    // ↑ and Enter in one write: history recalls the last line, Enter sends it again.
    tty.write(`${KEYS.up}\r`);
    await tty.waitForText('Reply three.');
    expect(promptsToLead()).toEqual(['a whole line in one write', '2 secon-D!', '2 secon-D!']);

    // A slash command completed with Tab and run with Enter, all in one write.
    tty.write('/tas\t\r');
    screen = await tty.waitForText(/Tasks \(0: 0 pending/);
    tty.press('escape');
    // The third turn may still be ending (its progress holds the input line): wait for the empty input.
    screen = await tty.waitForScreen((s) => !/Tasks \(0:/.test(s) && /lead \(lead\)/.test(s) && s.includes('ask the lead'));
    expect(screen).toContain('ask the lead');
    expect(fake.unscripted).toEqual([]);
  });
});

describe('typing as the console starts', () => {
  it('keys typed once the input line shows, before the team is open, wait and reach the lead in order', async () => {
    const tty = await start();
    fake = tty.fake;
    fake.script('lead', replyText('Early reply.'));
    // The first frame comes before the session core is loaded (docs/console.md#starting): the
    // line and Enter are written at once, while the team is most likely still opening.
    await tty.waitForText('ask the lead');
    tty.write('typed early');
    tty.write(`${BACKSPACE}Y\r`);
    const screen = await tty.waitForScreen((s) => s.includes('Early reply.') && s.includes('ask the lead'));
    expect(screen).toContain('› typed earlY');
    expect(promptsToLead()).toEqual(['typed earlY']);
  });

  it('the reply to a line typed before the team is open shows as markdown (marked loads behind the first frame)', async () => {
    const tty = await start();
    fake = tty.fake;
    fake.script('lead', replyText('## Early plan\n\nA **bold** word.\n\n> A quoted remark.'));
    await tty.waitForText('ask the lead');
    tty.write('plan it\r');
    const screen = await tty.waitForText('A quoted remark.');
    expect(screen).toContain('Early plan');
    expect(screen).not.toContain('## Early plan');
    expect(screen).not.toContain('**bold**');
    expect(screen).toContain('▎ A quoted remark.');
    expect(promptsToLead()).toEqual(['plan it']);
  });
});
