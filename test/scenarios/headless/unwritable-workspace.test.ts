// A workspace huddle cannot write (read-only, a full disk), a disk that fills up mid-run, a broken
// inbox cursor, a broken task file: one clear line each (exit 2 at start, 1 mid-run), never a
// stack trace, nothing lost. The real CLI against the fake API.
//
// Read-only and full file systems are made for real: the CLI runs in a new user and mount
// namespace (`unshare -rm`, util-linux) on a tmpfs mounted read-only, or small and filled up.
// Tests run as root in CI, and root ignores file permissions (chmod would prove nothing), but
// not a read-only mount or a full one. Without unshare these tests fail when CI=true and are
// skipped locally, saying what to install.
import { withoutRunRecord } from '../../helpers/run-record-lines.js';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { baseEnv, type CliResult, CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

const namespaces = spawnSync('unshare', ['-rm', 'true']).status === 0;
const NAMESPACES_MISSING = 'needs `unshare -rm` (util-linux, with user namespaces enabled) to mount a read-only or full tmpfs; install util-linux';
if (!namespaces && process.env.CI === 'true') {
  describe('unwritable workspaces', () => {
    it('needs unshare', () => {
      throw new Error(NAMESPACES_MISSING);
    });
  });
}
const withNamespaces = namespaces ? describe : describe.skip;
if (!namespaces && process.env.CI !== 'true') console.warn(`skipped: unwritable workspace tests ${NAMESPACES_MISSING}`);

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-unwritable-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

/**
 * Runs `huddle ARGS` with the workspace a fresh tmpfs (`mountOptions`), after `setup` (shell, run
 * in the namespace with the workspace in $W), in a private user and mount namespace.
 */
function huddleOnTmpfs(mountOptions: string, setup: string, args: string[]): Promise<CliResult> {
  const env = { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url, W: ws.dir, NODE: process.execPath, CLI: CLI_PATH };
  const script = `mount -t tmpfs -o ${mountOptions} huddle-test "$W" || exit 99; ${setup}; cd "$W" && exec "$NODE" "$CLI" "$@"`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-rm', 'sh', '-c', script, 'sh', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, durationMs: 0, timedOut: signal === 'SIGKILL' });
    });
  });
}

const lines = (text: string) => text.split('\n').filter(Boolean);
const noStack = (result: CliResult) => expect(result.stderr).not.toMatch(/^\s+at /m);

withNamespaces('unwritable workspaces', () => {
  it('a read-only workspace: one line naming the place and why, exit 2', async () => {
    const result = await huddleOnTmpfs('ro,size=1m', 'true', ['-p', 'hello']);
    expect(result.code, result.stderr).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `huddle: cannot open the team (.team/ in ${ws.dir}): cannot write ${ws.dir}/.team: the file system is read-only (EROFS)`,
    ]);
    expect(result.stdout).toBe('');
    expect(fake.requests).toHaveLength(0);
  });

  it('a read-only workspace holding a team: the same, and the team is left as it was', async () => {
    const setup = [
      'mkdir -p "$W/.team" "$W/.tasks"',
      `printf '%s' '{"team_name":"t","lead":"lead","members":[{"name":"lead","role":"lead","status":"shutdown","created_at":"x","updated_at":"x"}]}' > "$W/.team/config.json"`,
      'mount -o remount,ro "$W"',
    ].join(' && ');
    const result = await huddleOnTmpfs('size=1m', setup, ['-p', 'hello']);
    expect(result.code, result.stderr).toBe(2);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/^huddle: cannot open the team \(\.team\/ in .*\): cannot write .*\.team\/huddle\.lock: the file system is read-only \(EROFS\)$/),
    ]);
    noStack(result);
  });

  it('a full disk: one line, exit 2', async () => {
    const result = await huddleOnTmpfs('size=64k', 'head -c 1000000 /dev/zero > "$W/fill" 2>/dev/null; true', ['-p', 'hello']);
    expect(result.code, result.stderr).toBe(2);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/^huddle: cannot open the team \(\.team\/ in .*\): cannot write .*: no space is left on the device \(ENOSPC\)$/),
    ]);
    noStack(result);
    expect(fake.requests).toHaveLength(0);
  });

  it('a disk that fills up mid-run: the run stops with one clear line, exit 1, never a stack', async () => {
    // The lead fills the disk with bash, then answers at length (its events no longer fit).
    fake.script('lead', reply(toolUse('bash', { command: 'head -c 5000000 /dev/zero > fill; echo filled' })), replyText(`Done. ${'x'.repeat(20_000)}`));
    const result = await huddleOnTmpfs('size=1m', 'true', ['-p', 'fill the disk']);
    expect(result.code, result.stderr).toBe(1);
    const said = lines(result.stderr);
    expect(said).toContainEqual(
      expect.stringMatching(
        /^huddle: warning: cannot write .*\/\.team\/.*: no space is left on the device \(ENOSPC\); the team's state can no longer be kept, so the run stops \(once fixed, huddle --resume goes on from here\)$/,
      ),
    );
    expect(
      said.filter((line) => line.includes('ENOSPC')),
      result.stderr,
    ).toHaveLength(1);
    expect(said, result.stderr).toHaveLength(1);
    noStack(result);
  });
});

describe('broken state files', () => {
  it('a broken inbox cursor: one line naming the file and what to do, exit 2, the inbox untouched', async () => {
    const inbox = path.join(ws.dir, '.team', 'inbox');
    mkdirSync(inbox, { recursive: true });
    const message = { id: 'msg_1', type: 'message', from: 'alice', to: 'lead', content: 'hi', ts: new Date().toISOString() };
    writeFileSync(path.join(inbox, 'lead.jsonl'), `${JSON.stringify(message)}\n`);
    writeFileSync(path.join(inbox, 'lead.cursor'), '{"offset": ');
    const result = await runCli(['-p', 'hello', '--cwd', ws.dir], { env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code, result.stderr).toBe(2);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(
        /^huddle: .*\/\.team\/inbox\/lead\.cursor is not valid JSON \(.*\); it marks how far lead's inbox was delivered: fix or remove it \(removed, every message of lead is delivered again; the inbox itself is intact\)$/,
      ),
    ]);
    expect(readFileSync(path.join(inbox, 'lead.cursor'), 'utf8')).toBe('{"offset": ');
    expect(readFileSync(path.join(inbox, 'lead.jsonl'), 'utf8')).toBe(`${JSON.stringify(message)}\n`);
    expect(fake.requests).toHaveLength(0);
  });

  it('a broken task file: headless prints the warning text (never `warning: undefined`)', async () => {
    mkdirSync(path.join(ws.dir, '.tasks'), { recursive: true });
    const broken = path.join(ws.dir, '.tasks', 'task_1.json');
    writeFileSync(broken, '{"id": 1, "subj');
    fake.script('lead', reply(toolUse('task_list', {})), replyText('The board has a broken file.'));
    const result = await runCli(['-p', 'look at the board', '--cwd', ws.dir], { env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code, result.stderr).toBe(0);
    expect(lines(withoutRunRecord(result.stderr))).toEqual([
      expect.stringMatching(
        new RegExp(`^huddle: warning: skipped ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON: .*; fix or remove the file$`),
      ),
    ]);
    expect(result.stderr).not.toContain('undefined');
    expect(existsSync(broken)).toBe(true);
  });
});
