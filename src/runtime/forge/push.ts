// Pushing a branch to the person's remote, by huddle's own git (runtime/git/host-git.ts), never from
// the sandbox (docs/backlog.md#credentials). The remote is the main checkout's `origin` (its
// config is read-only to agents). A token for an https remote travels to git in the environment
// (GIT_CONFIG_*), never on a command line or in a file; an ssh remote uses the person's agent.
import { pinRepository, runGit } from '../git/host-git.js';

export class PushError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushError';
  }
}

/** The URL of `remote` in the repository at `root`, or undefined when it has none. */
export async function remoteUrl(root: string, remote = 'origin'): Promise<string | undefined> {
  const result = await runGit(root, ['remote', 'get-url', remote], { pin: pinRepository(root) });
  return result.code === 0 ? result.stdout.trim() || undefined : undefined;
}

/** The protocol git must be allowed for a URL (host-git allows local files only). */
function protocolOf(url: string): string {
  // `ext::COMMAND` and other remote helpers run programs: never.
  if (/^[a-z][a-z0-9+.-]*::/i.test(url)) return 'never';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme) return scheme === 'http' || scheme === 'https' || scheme === 'git' || scheme === 'ssh' || scheme === 'file' ? scheme : 'never';
  return /^[^/]+@[^/:]+:/.test(url) ? 'ssh' : 'file';
}

/** Pushes `branch` of the repository at `root` to `url` under the same name; returns its commit. */
export async function pushBranch(root: string, url: string, branch: string, token?: string): Promise<string> {
  const pin = pinRepository(root);
  const protocol = protocolOf(url);
  if (protocol === 'never') throw new PushError(`cannot push to ${url}: huddle pushes over https, ssh, git or to a local path`);
  const env: Record<string, string> = {};
  if (token && (protocol === 'https' || protocol === 'http')) {
    env.GIT_CONFIG_COUNT = '1';
    env.GIT_CONFIG_KEY_0 = 'http.extraHeader';
    env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  }
  // The person's ssh agent: a key never leaves it, and the sandbox never sees its socket.
  if (protocol === 'ssh' && process.env.SSH_AUTH_SOCK) env.SSH_AUTH_SOCK = process.env.SSH_AUTH_SOCK;
  const tip = await runGit(root, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { pin });
  if (tip.code !== 0) throw new PushError(`there is no branch ${branch} to push`);
  const pushed = await runGit(
    root,
    ['-c', `protocol.${protocol}.allow=always`, 'push', '-q', '--no-verify', url, `refs/heads/${branch}:refs/heads/${branch}`],
    {
      pin,
      env,
    },
  );
  if (pushed.code !== 0) throw new PushError(`git push of ${branch} failed: ${pushed.stderr.trim().split('\n').slice(0, 3).join(' ') || 'no output from git'}`);
  return tip.stdout.trim();
}
