// Where the machine cannot sandbox (no bubblewrap on PATH), huddle says so wherever a person
// looks (docs/contract.md#sandbox): the second line of `huddle --version`, headless stderr, and the
// console's status bar; with HUDDLE_SANDBOX=off (on purpose) only a quiet note.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replyText, startFakeApi, type FakeApi } from '../../helpers/fake-api.js';
import { PtyDriver } from '../../helpers/pty-driver.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

let bin: string;
let fake: FakeApi;
let ws: Workspace;
let driver: PtyDriver | undefined;

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
  await driver?.kill();
  driver = undefined;
  await fake.close();
  ws.cleanup();
  rmSync(bin, { recursive: true, force: true });
});

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
    driver = new PtyDriver({ cwd: ws.dir, cols, rows, env: { PATH: bin, ANTHROPIC_API_KEY: 'sk-test-pty-0123456789', ANTHROPIC_BASE_URL: fake.url } });
    const screen = await driver.waitFor('sandbox: off — install bubblewrap');
    expect(screen.split('\n').at(-1)).toContain('sandbox: off — install bubblewrap');
    await driver.kill();
    driver = new PtyDriver({
      cwd: ws.dir,
      cols,
      rows,
      env: { PATH: bin, HUDDLE_SANDBOX: 'off', ANTHROPIC_API_KEY: 'sk-test-pty-0123456789', ANTHROPIC_BASE_URL: fake.url },
    });
    const quiet = await driver.waitFor(/sandbox: off/);
    expect(quiet).not.toContain('install bubblewrap');
  });
});
