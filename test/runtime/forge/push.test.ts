// Pushes by huddle's own git (docs/backlog.md#credentials): a token reaches the remote as an
// Authorization header, from git's environment (never its command line), and a push git cannot
// make is one line naming the branch.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { pushBranch, PushError, remoteUrl } from '../../../src/runtime/forge/push.js';
import { forgetPinnedRepositories } from '../../../src/runtime/git/host-git.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  forgetPinnedRepositories();
});

async function repo(): Promise<string> {
  const root = mkdtempSync(path.join(tmpdir(), 'huddle-push-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const git = (...args: string[]) => execa('git', args, { cwd: root, env: TEST_GIT_IDENTITY });
  await git('init', '-q', '-b', 'main');
  writeFileSync(path.join(root, 'a.txt'), 'a\n');
  await git('add', 'a.txt');
  await git('commit', '-q', '-m', 'a');
  await git('branch', 'huddle/issue-1-a');
  return root;
}

describe('pushBranch', () => {
  it('sends the token as git’s Authorization header, never on its command line', async () => {
    const root = await repo();
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(403).end('no');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/acme/app.git`;
    const token = 'ghp_pushmarker0123456789';
    const error = await pushBranch(root, url, 'huddle/issue-1-a', token).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushError);
    expect((error as Error).message).toMatch(/^git push of huddle\/issue-1-a failed: /);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).not.toContain(token);
    expect(seen[0]!.authorization).toBe(`Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`);
  });

  it('pushes to a bare repository, reads origin, and names a branch that is not there', async () => {
    const root = await repo();
    const bare = mkdtempSync(path.join(tmpdir(), 'huddle-push-bare-'));
    cleanups.push(() => rmSync(bare, { recursive: true, force: true }));
    await execa('git', ['init', '-q', '--bare', bare]);
    await execa('git', ['remote', 'add', 'origin', bare], { cwd: root });
    expect(await remoteUrl(root)).toBe(bare);
    expect(await remoteUrl(root, 'upstream')).toBeUndefined();
    const sha = await pushBranch(root, bare, 'huddle/issue-1-a');
    expect((await execa('git', ['rev-parse', 'refs/heads/huddle/issue-1-a'], { cwd: bare })).stdout).toBe(sha);
    await expect(pushBranch(root, bare, 'huddle/nope')).rejects.toThrow('there is no branch huddle/nope to push');
    await expect(pushBranch(root, 'ext::sh -c touch% /tmp/pwned', 'huddle/issue-1-a')).rejects.toThrow(/huddle pushes over https, ssh, git or to a local path/);
  });
});
