// Where the machine cannot sandbox (no bubblewrap on PATH), huddle says so wherever a person
// looks (docs/contract.md#sandbox): the second line of `huddle --version`, headless stderr, and the
// console's status bar; with HUDDLE_SANDBOX=off (on purpose) only a quiet note.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replyText, startFakeApi, type FakeApi } from '../../helpers/fake-api.js';
import { useConsoles } from '../../helpers/console-pty.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

let bin: string;
let fake: FakeApi;
let ws: Workspace;

beforeEach(async () => {
  // A PATH with what huddle needs to run but no bwrap.
  bin = mkdtempSync(path.join(tmpdir(), 'huddle-no-bwrap-'));
  mkdirSync(bin, { recursive: true });
  for (const program of ['bash', 'sh', 'git', 'env']) symlinkSync(`/usr/bin/${program}`, path.join(bin, program));
  symlinkSync(process.execPath, path.join(bin, 'node'));
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-no-bwrap-ws-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
  rmSync(bin, { recursive: true, force: true });
});

const start = useConsoles();

describe('without bubblewrap', () => {
  it('--version says the sandbox is off and what to install', async () => {
    const result = await runCli(['--version'], { env: { PATH: bin } });
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[1]).toMatch(/^sandbox: off — install bubblewrap/);
  });

  it('a headless run says it on stderr, once', async () => {
    fake.script('lead', replyText('Hello.'));
    const result = await runCli(['-p', 'hi'], { cwd: ws.dir, env: { PATH: bin, ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split('\n').filter((line) => line.includes('sandbox: off — install bubblewrap'))).toHaveLength(1);
  });

  it.each([
    [80, 24],
    [160, 45],
  ])('the console keeps it in the status bar at %i×%i; HUDDLE_SANDBOX=off makes it a quiet note', async (cols, rows) => {
    const loud = await start({ fake, workspace: ws.dir, cols, rows, env: { PATH: bin } });
    // The first frame comes before the session opens: wait for the team to be up, so closing it closes a team.
    const screen = await loud.waitForScreen((s) => s.includes('sandbox: off — install bubblewrap') && s.includes('waiting for a prompt'));
    expect(screen.split('\n').at(-1)).toContain('sandbox: off — install bubblewrap');
    await loud.close();
    const off = await start({ fake, workspace: ws.dir, cols, rows, env: { PATH: bin, HUDDLE_SANDBOX: 'off' } });
    const quiet = await off.waitForText(/sandbox: off/);
    expect(quiet).not.toContain('install bubblewrap');
  });
});
