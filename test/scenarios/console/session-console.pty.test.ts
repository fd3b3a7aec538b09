// The console over a live session: input typed while an agent
// works shows as queued and then as delivered; the person's own actions said as theirs; /send to a
// stopped teammate refused; a refused key not offered a restart; questions asked in the asking
// agent's pane with numbered choices (and a reason for a no); edits with +N −M and their diff;
// approval waits left out of a tool's time; command output as a page; .team/ kept out of git; the
// earlier conversation in the panes on reopening, and --continue. Real PTYs, the fake Messages API.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { KEYS, useConsoles, type ConsolePty } from '../../helpers/console-pty.js';
import { paneOf } from '../../helpers/console-screen.js';
import { allUserTexts, lastToolResults, lastUserTexts } from '../../helpers/team-harness.js';

let fake: FakeApi;
let dir: string;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-session-console-')));
});

afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = useConsoles();

function open(cols: number, rows: number, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<ConsolePty> {
  return start({
    fake,
    workspace: dir,
    cols,
    rows,
    args,
    env,
  });
}

async function quit(tty: ConsolePty): Promise<void> {
  await tty.waitForText(/lead \(lead\) idle/);
  tty.press('ctrlC');
  await tty.waitForText('Press Ctrl+C again to quit');
  tty.press('ctrlC');
  expect((await tty.exited).exitCode).toBe(0);
}

describe.each([
  [80, 24],
  [160, 45],
])('the console over the session at %i×%i', (cols, rows) => {
  it('shows what is typed while the lead works as queued at once, and as delivered when it enters its context', async () => {
    fake.script(
      'lead',
      { kind: 'message', content: [text('Working through it slowly. '.repeat(40))], delayMs: 40, textChunk: 12 },
      replyText('Got the README note.'),
    );
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('start the work');
    tty.press('enter');
    await tty.waitForText('Working through it slowly.');
    await tty.type('also add a README');
    tty.press('enter');
    let screen = await tty.waitForText('⧗ queued for lead: also add a README');
    expect(screen).toMatch(/lead \(lead\) working/);
    screen = await tty.waitForText('Got the README note.');
    expect(screen).not.toContain('⧗ queued');
    expect(screen).toContain('› also add a README');
    expect(
      fake.requests
        .filter((r) => r.agent === 'lead')
        .at(-1)!
        .body.messages.at(-1)
        .content.map((b: { text?: string }) => b.text ?? '')
        .join(''),
    ).toContain('also add a README');
  }, 60_000);

  it("asks in the pane with numbered choices: 3 and a reason says no and tells the agent why; 2 allows from now on; the wait is not the tool's time", async () => {
    writeFileSync(path.join(dir, 'a.txt'), 'one\n');
    fake.script(
      'lead',
      reply(text('Installing.'), toolUse('bash', { command: 'npm install left-pad' })),
      reply(text('Touching.'), toolUse('bash', { command: 'touch made.txt' })),
      reply(text('Editing.'), toolUse('edit_file', { path: 'a.txt', old_text: 'one', new_text: 'uno' })),
      replyText('All set.'),
    );
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('set it up');
    tty.press('enter');
    let screen = await tty.waitForText(/3 no, and tell lead why/);
    expect(screen).toContain('lead wants to run npm install left-pad');
    expect(screen).toContain("2 yes, and don't ask again for 'npm install'");
    expect(screen).toContain('1 yes');
    // Wait a while before answering: the tool's time must not count it. The status clock runs from
    // the agent's "waiting", which comes before the question; the wait the tool leaves out runs from
    // the question: let the clock go 2 s past where it was when the question showed.
    const clock = (shown: string) => Number(/waiting · permission: npm install left-pad · (\d+) s/.exec(shown)?.[1] ?? -1);
    const askedAt = Math.max(0, clock(screen));
    await tty.waitForScreen((shown) => clock(shown) >= askedAt + 2);
    tty.write('3');
    await tty.waitForText('why not?');
    await tty.type('we use pnpm here');
    tty.press('enter');
    screen = await tty.waitForText('lead wants to run touch made.txt');
    expect(screen).toMatch(/3 no, and tell lead why/);
    // The denied call's own time is not the seconds it waited for the person.
    // (Its own time is in ms or s: how long the gate took before asking depends on the machine.)
    expect(screen).toMatch(/⏺ bash npm install left-pad ✗ (\d+ ms|[\d.]+ s) \(after \d+\.\d s waiting for you\)/);
    const toLead = fake.requests.filter((r) => r.agent === 'lead');
    expect(lastToolResults(toLead.at(-1)!)[0]!.content).toMatch(/the person denied this .*They said: we use pnpm here\./);
    tty.write('2');
    screen = await tty.waitForText('All set.');
    expect(JSON.parse(readFileSync(path.join(dir, '.team', 'settings.local.json'), 'utf8')).permissions.allow).toContain('touch');
    // An edit says what it changed, without Ctrl+O.
    expect(screen).toMatch(/edit_file a\.txt ✓ \+1 −1/);
    expect(screen).toMatch(/^\s+-one$/m);
    expect(screen).toMatch(/^\s+\+uno$/m);
  }, 60_000);

  it("says the person's /spawn and /shutdown as theirs, refuses /send to a stopped teammate, and opens /cost as a page", async () => {
    fake.respond((request) => {
      if (request.agent !== 'carol') return undefined;
      const said = allUserTexts(request).join('\n');
      const asked = /"request_id":"(shutdown_[0-9a-f]+)"/.exec(lastUserTexts(request).join('\n'))?.[1];
      if (asked) return reply(toolUse('shutdown_response', { request_id: asked, approve: true }));
      return said.includes('write the docs') ? reply(toolUse('idle', {})) : undefined;
    });
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('/spawn carol writer write the docs');
    tty.press('enter');
    await tty.waitForText(/2:\S carol/);
    tty.write(KEYS.alt(2));
    let screen = await tty.waitForScreen(paneOf('carol'));
    screen = await tty.waitForText('spawned by you');
    expect(screen).not.toContain('prompt from the lead');
    await tty.waitForText(/carol \(writer\) idle/);
    await tty.type('/shutdown carol ');
    tty.press('enter');
    screen = await tty.waitForText('you asked carol to shut down');
    expect(screen).not.toMatch(/✉ lead \[shutdown_request\]/);
    await tty.waitForText(/carol \(writer\) shutdown/);
    await tty.type('/send carol are you there?');
    tty.press('enter');
    screen = await tty.waitForText('carol has shut down, so nothing would read it');
    expect(screen).not.toContain('sent to carol');
    // Esc and the next key can reach the console in one read (Alt+/): wait for Esc to clear the notice.
    tty.press('escape');
    await tty.waitForScreen((s) => !s.includes('carol has shut down, so nothing would read it'));
    await tty.type('/cost ');
    tty.press('enter');
    screen = await tty.waitForText('Cost: spend per agent and per task');
    expect(screen).toMatch(/total: \$\d/);
    tty.press('escape');
    screen = await tty.waitForScreen(paneOf('carol'));
    expect(screen).not.toMatch(/total: \$\d/); // never inside a transcript
  }, 60_000);

  it('says what to fix when the API refuses the key, and offers no restart for it', async () => {
    fake.script('lead', { kind: 'status', status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } });
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('hello');
    tty.press('enter');
    await tty.waitForText(/the API key was refused \(401\): check ANTHROPIC_API_KEY/);
    // A failure's needs-you notice is queued with the failed status, in the same update.
    const screen = await tty.waitForText(/lead \(lead\) failed/);
    expect(screen).toMatch(/the API key was refused \(401\)/);
    expect(screen).not.toContain('needs you');
    expect(screen).not.toMatch(/restart/i);
    expect(screen).not.toContain('waiting for your approval');
  }, 60_000);

  it('shows the earlier conversation in the panes on reopening; --continue takes it up; .team/ stays out of git', async () => {
    execFileSync('git', ['init', '-q'], { cwd: dir });
    fake.script('lead', replyText('First answer, about parsers.'), replyText('Second answer, after the reopen.'), replyText('Third answer, continuing.'));
    let tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('tell me about parsers');
    tty.press('enter');
    await tty.waitForText('First answer, about parsers.');
    await quit(tty);
    // Nothing of the team's runtime state is up for committing.
    const untracked = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir, encoding: 'utf8' });
    expect(untracked.split('\n').filter((line) => line.includes('.team/'))).toEqual(['?? .team/.gitignore']);

    // Reopened: the lead's pane shows what was said, marked as an earlier session.
    tty = await open(cols, rows);
    let screen = await tty.waitForText('First answer, about parsers.');
    expect(screen).toContain('› tell me about parsers');
    expect(screen).toContain('an earlier session');
    await tty.type('a new question');
    tty.press('enter');
    await tty.waitForText('Second answer, after the reopen.');
    await quit(tty);

    // --continue: the conversation goes on, for the model too.
    tty = await open(cols, rows, ['--continue']);
    screen = await tty.waitForText('Second answer, after the reopen.');
    expect(screen).toContain('the conversation so far');
    // The turn huddle gives a resumed agent is said in words, never shown as a prompt.
    screen = await tty.waitForText('resumed after huddle restarted');
    expect(screen).not.toContain('<identity>');
    await tty.type('and then?');
    tty.press('enter');
    await tty.waitForText('Third answer, continuing.');
    const last = fake.requests.filter((r) => r.agent === 'lead').at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain('a new question');
  }, 90_000);
});
