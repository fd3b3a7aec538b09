// Where the kept-open sandbox's shell cannot start (docs/sandbox.md#the-sandbox): its unreadable copy
// of bash lives under TMPDIR, and a hardened machine mounts that noexec. Every command must still
// run, each in a sandbox of its own, and none twice. Needs root to mount a noexec tmpfs (CI runs as
// root; elsewhere the test is skipped unless CI=true).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, REPO_ROOT, runCli } from '../../helpers/run-cli.js';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';

const unavailable = process.getuid?.() !== 0 ? 'mounting a noexec tmpfs needs root' : undefined;

describeSandboxed('sandbox shell: a TMPDIR mounted noexec', () => {
  if (unavailable && process.env.CI !== 'true') {
    it.skip(`(skipped: ${unavailable})`, () => undefined);
    return;
  }
  let fake: FakeApi;
  let tmp: string;
  beforeAll(async () => {
    fake = await startFakeApi();
    // Outside /tmp: the sandbox's private /tmp would hide it from nothing that matters here, but the mount must be ours alone.
    const parent = path.join(REPO_ROOT, 'node_modules', '.cache', 'huddle-sandbox-tests');
    mkdirSync(parent, { recursive: true });
    tmp = mkdtempSync(path.join(parent, 'noexec-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,nosuid,nodev,mode=1777', 'huddle-test-noexec', tmp]);
  });
  afterAll(async () => {
    await fake?.close();
    if (tmp) {
      execFileSync('umount', ['-l', tmp]);
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('runs every command, each once, in sandboxes of their own', async () => {
    fake.respond((request) => {
      const done = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === 'assistant').length;
      if (done === 0) return reply(toolUse('bash', { command: 'echo first >> runs.txt; echo ran-$((6*7))' }));
      if (done === 1) return reply(toolUse('bash', { command: 'echo second >> runs.txt; echo again-$((6*7))' }));
      return replyText('Both ran.');
    });
    const ws = makeWorkspace('huddle-noexec-');
    try {
      const result = await runCli(['-p', 'run them', '--permission-mode', 'auto'], {
        cwd: ws.dir,
        env: { ANTHROPIC_BASE_URL: fake.url, TMPDIR: tmp },
        timeoutMs: 60_000,
      });
      expect(result.code, result.stderr).toBe(0);
      const results = JSON.stringify(fake.requests.at(-1)?.body?.messages ?? []);
      expect(results).toContain('ran-42');
      expect(results).toContain('again-42');
      expect(execFileSync('cat', [path.join(ws.dir, 'runs.txt')], { encoding: 'utf8' })).toBe('first\nsecond\n');
    } finally {
      ws.cleanup();
    }
  });
});
