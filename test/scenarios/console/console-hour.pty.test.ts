// An hour at the console without a surprise (docs/console.md#approvals): a restart that visibly
// restarts, bash output shown by default, one key scheme per question, allow-list offers that name
// the subcommand, connection errors that say where and why. The built CLI in a real PTY against the
// fake Messages API, at 80×24 (and 160×45 where the layout matters).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { useConsoles, type ConsolePty } from '../../helpers/console-pty.js';
import { rowOf, rowsOf } from '../../helpers/console-screen.js';

let fake: FakeApi;
let dir: string;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-hour-'));
});

afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});
// After the hooks above: vitest runs after-hooks in reverse, so the consoles close before their fake and workspace go.
const start = useConsoles();

/** The console in this test's workspace, on its fake API, retries off unless a test turns them on. */
function open(cols: number, rows: number, env: Record<string, string> = {}, args: string[] = []): Promise<ConsolePty> {
  return start({ cols, rows, args, fake, workspace: dir, env: { HUDDLE_RETRY_BASE_MS: '5', HUDDLE_MAX_RETRIES: '0', ...env } });
}

async function ask(tty: ConsolePty, prompt: string): Promise<void> {
  await tty.waitForText('ask the lead');
  await tty.type(prompt);
  tty.press('enter');
}

/** The lead pane's header row. */
function header(screen: string): string {
  return rowsOf(screen).find((row) => row.includes('lead (lead)')) ?? '';
}

/** The screen's text with its rows joined, so a sentence wrapped at 80 columns reads whole. */
function joined(screen: string): string {
  return rowsOf(screen)
    .map((row) => row.trim())
    .join(' ');
}

const SERVER_ERROR = { kind: 'status' as const, status: 500, body: { type: 'error', error: { type: 'api_error', message: 'upstream broke' } } };

describe.each([
  [80, 24],
  [160, 45],
])('a restart that visibly restarts, at %i×%i', (cols, rows) => {
  it('1 after a failure: the header says restarting, then the new state; one wording', async () => {
    // The restart's summary call streams slowly, so the header is seen while it restarts.
    fake.script('lead', SERVER_ERROR, { kind: 'message', content: [text('SUMMARY: the lead had just been asked to go.')], delayMs: 150 });
    const tty = await open(cols, rows);
    await ask(tty, 'go');
    let screen = await tty.waitForText(/1 restart lead/);
    expect(header(screen)).toMatch(/✗ lead \(lead\) failed/);
    tty.write('1');
    await tty.waitForScreen((s) => header(s).includes('↻ lead (lead) restarting…'));
    screen = await tty.waitForScreen((s) => /lead \(lead\) idle: restarted/.test(header(s)));
    expect(header(screen)).not.toContain('failed');
    expect(screen).toContain('↻ restarting lead…');
    expect(joined(screen)).toMatch(/restarted lead with a summary of its transcript; .* it waits for your next prompt/);
    expect(screen).not.toContain('approved: failed');
    // It runs again: the next prompt is answered.
    fake.script('lead', replyText('Back on it.'));
    await tty.type('carry on');
    tty.press('enter');
    await tty.waitForText('Back on it.');
  }, 60_000);

  it('offers no restart for a conversation longer than the model context, and says what to do', async () => {
    fake.script('lead', {
      kind: 'status',
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } },
    });
    const tty = await open(cols, rows);
    await ask(tty, 'go');
    const screen = await tty.waitForScreen((s) => joined(s).includes('/compact lead summarises it'));
    expect(rowOf(screen, /restart lead/)).toBe(-1);
    expect(screen).not.toContain('needs you');
  }, 60_000);
});

describe.each([
  [80, 24],
  [160, 45],
])('tool results at %i×%i', (cols, rows) => {
  it("shows a command's first lines without Ctrl+O, and how many lines write_file wrote", async () => {
    const twelve = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n');
    fake.script(
      'lead',
      reply(toolUse('bash', { command: 'seq 1 12' })),
      reply(toolUse('write_file', { path: 'notes.txt', content: `${twelve}\n` })),
      replyText('Both done.'),
    );
    const tty = await open(cols, rows);
    await ask(tty, 'count and write');
    const screen = await tty.waitForText('Both done.');
    const at = rowOf(screen, /⏺ bash seq 1 12 .*✓/);
    expect(at, screen).toBeGreaterThanOrEqual(0);
    const rowsAfter = rowsOf(screen)
      .slice(at + 1, at + 6)
      .map((row) => row.trim());
    expect(rowsAfter).toEqual(['1', '2', '3', '4', '… +8 lines (Ctrl+O)']);
    expect(screen).not.toContain('[exit code 0]');
    expect(screen).toMatch(/⏺ write_file notes\.txt .*✓ wrote 12 lines/);
  }, 60_000);
});

describe.each([
  [80, 24],
  [160, 45],
])('questions at %i×%i', (cols, rows) => {
  it('a budget stop asks with numbers only, 1 and 2, and no y/n beside them', async () => {
    // claude-sonnet-4-6: $3 per million input tokens, so 100k input tokens cost $0.30 a call.
    const dear = { input_tokens: 100_000, output_tokens: 1 };
    fake.script(
      'lead',
      Object.assign(reply(toolUse('task_list', {})), { usage: dear }),
      Object.assign(reply(toolUse('task_list', {})), { usage: dear }),
      replyText('Finished.'),
    );
    const tty = await open(cols, rows, {}, ['--budget-usd', '0.5']);
    await ask(tty, 'spend');
    const screen = await tty.waitForScreen((s) => /1 extend the budget\s+2 stop lead/.test(joined(s)));
    expect(joined(screen)).not.toMatch(/\by extends\b|\bn stops\b|Ctrl\+Y, then y/);
    tty.write('1');
    await tty.waitForText('Finished.');
  }, 60_000);

  it('what was asked and answered reads before the call’s own line with its result', async () => {
    fake.script('lead', reply(toolUse('bash', { command: 'touch made.txt' })), replyText('Touched.'));
    const tty = await open(cols, rows);
    await ask(tty, 'touch it');
    await tty.waitForText(/2 yes, and don't ask again for 'touch'\s+3 no/);
    tty.write('1');
    const screen = await tty.waitForText('Touched.');
    const asked = rowOf(screen, 'asked you to approve: bash touch made.txt');
    const approved = rowOf(screen, 'approved: bash touch made.txt');
    const done = rowOf(screen, /⏺ bash touch made\.txt .*✓/);
    expect(asked, screen).toBeGreaterThanOrEqual(0);
    expect(approved).toBeGreaterThan(asked);
    expect(done).toBeGreaterThan(approved);
  }, 60_000);
});

describe('allow-list offers at 80×24', () => {
  it('offers an interpreter with its script, never bare, and that entry lets the script run next time', async () => {
    fake.script(
      'lead',
      reply(toolUse('bash', { command: 'node scripts/build.mjs' })),
      reply(toolUse('bash', { command: 'node scripts/build.mjs --prod' })),
      replyText('Built twice.'),
    );
    const tty = await open(80, 24);
    await ask(tty, 'build');
    const screen = await tty.waitForScreen((s) => joined(s).includes("2 yes, and don't ask again for 'node scripts/build.mjs'"));
    expect(joined(screen)).not.toContain("'node'");
    tty.write('2');
    await tty.waitForText('Built twice.');
    // The second call matched the entry: asked once only.
    expect(fake.requests.filter((r) => r.agent === 'lead')).toHaveLength(3);
    const settings = JSON.parse(readFileSync(path.join(dir, '.team', 'settings.local.json'), 'utf8'));
    expect(settings.permissions.allow).toEqual(['node scripts/build.mjs']);
  }, 60_000);
});

/** A port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each([
  [80, 24],
  [160, 45],
])('a connection error at %i×%i', (cols, rows) => {
  it('names the host, the port and the cause; the header says retrying N of M while it retries', async () => {
    const port = await closedPort();
    const tty = await open(cols, rows, { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, HUDDLE_MAX_RETRIES: '2', HUDDLE_RETRY_BASE_MS: '1500' });
    await ask(tty, 'hello');
    let screen = await tty.waitForScreen((s) => /retrying 1 of 2/.test(header(s)));
    expect(header(screen)).not.toContain('thinking');
    screen = await tty.waitForScreen((s) => /lead \(lead\) failed/.test(header(s)), { timeoutMs: 30_000 });
    expect(joined(screen)).toContain(`connection to 127.0.0.1:${port} failed: refused (ECONNREFUSED)`);
    // A connection that failed may work on a restart: it is offered.
    expect(joined(screen)).toMatch(/1 restart lead\s+2 dismiss/);
  }, 60_000);
});

describe('the rest of an hour at 80×24', () => {
  /** Runs a command line as typed (a space closes the palette first). */
  async function command(tty: ConsolePty, line: string): Promise<void> {
    await tty.type(`${line} `);
    await tty.waitForText(`lead › ${line}`);
    tty.press('enter');
  }

  it('/config says the endpoint, where the key comes from (never the key), the permission mode and the sandbox', async () => {
    const tty = await open(80, 24);
    await tty.waitForText('ask the lead');
    await command(tty, '/config');
    const screen = await tty.waitForText('model endpoint');
    const port = new URL(fake.url).port;
    expect(screen).toContain(`model endpoint   127.0.0.1:${port}`);
    expect(screen).toMatch(/API key\s+from the environment variable ANTHROPIC_API_KEY/);
    expect(screen).toMatch(/permission mode\s+ask/);
    expect(screen).toMatch(/sandbox {10}(on|off)/);
    expect(screen).not.toContain('sk-test');
  }, 60_000);

  it('/broadcast counts live agents only', async () => {
    fake.script('alice', replyText('Hello from alice.'));
    const tty = await open(80, 24);
    await tty.waitForText('ask the lead');
    await command(tty, '/spawn alice coder say hello');
    // The spawn has finished when the lead's pane says so (the tab bar and the echoed command name alice sooner).
    await tty.waitForText('spawned alice');
    await command(tty, '/shutdown alice --now');
    await tty.waitForText('stopping alice');
    await command(tty, '/team');
    await tty.waitForText(/alice\s+■ shutdown/);
    tty.press('escape');
    await command(tty, '/broadcast all hands');
    await tty.waitForText('sent to 1 live agent');
  }, 60_000);

  it('/clear asks first; /clear yes clears', async () => {
    fake.script('lead', replyText('Remember the parser.'));
    const tty = await open(80, 24);
    await ask(tty, 'hello');
    await tty.waitForText('Remember the parser.');
    await command(tty, '/clear');
    let screen = await tty.waitForText('/clear yes does it');
    expect(screen).toContain('Remember the parser.');
    await command(tty, '/clear yes');
    screen = await tty.waitForText('cleared lead');
    expect(screen).not.toContain('Remember the parser.');
  }, 60_000);

  it('/team at 80 columns keeps why an agent waits before the cache counts', async () => {
    const tty = await open(80, 24);
    await tty.waitForText('ask the lead');
    await command(tty, '/team');
    const screen = await tty.waitForText(/^name\s+status/m);
    expect(screen).not.toContain('cache r/w');
    await tty.waitForText(/lead\s+○ idle: waiting for a prompt/);
  }, 60_000);

  it('shows what the agent does next to the input, and after an interrupt what comes next', async () => {
    fake.script('lead', { kind: 'message', content: [text(`${'words keep coming '.repeat(300)}`)], delayMs: 25, textChunk: 18 });
    const tty = await open(80, 24);
    await ask(tty, 'talk');
    await tty.waitForText(/lead › .*lead: (thinking|writing) · .*Esc interrupts/, { timeoutMs: 20_000 });
    tty.press('escape');
    const screen = await tty.waitForScreen((s) => joined(s).includes('interrupted · type to go on from here'));
    expect(rowOf(screen, /lead › .*lead: (thinking|writing)/)).toBe(-1);
  }, 60_000);

  it('answers the question about an unfinished team with one key', async () => {
    fake.script('lead', replyText('First.'));
    let tty = await open(80, 24);
    await ask(tty, 'hello');
    await tty.waitForText('First.');
    tty.driver.process.kill('SIGKILL'); // a crash: the team is left unfinished
    await tty.exited;
    tty = await open(80, 24);
    await tty.waitForText('[r]esume it, start [f]resh');
    tty.write('f'); // no Enter
    await tty.waitForText('ask the lead');
  }, 60_000);
});
