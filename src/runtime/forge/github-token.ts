// The GitHub token huddle's own process uses (docs/backlog.md#credentials): GH_TOKEN, GITHUB_TOKEN,
// else what `gh auth token` prints. It is registered as a secret at once (redacted everywhere) and
// never handed to an agent: agents' environments drop every *_TOKEN (docs/trust.md#secrets-and-files).
import { execFileSync } from 'node:child_process';
import { registerSecret } from '../secrets.js';

export function githubToken(env: NodeJS.ProcessEnv = process.env, host?: string): string | undefined {
  let token = env.GH_TOKEN?.trim() || env.GITHUB_TOKEN?.trim();
  if (!token) {
    try {
      const args = ['auth', 'token', ...(host ? ['--hostname', host] : [])];
      token = execFileSync('gh', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
    } catch {
      // gh not installed or not logged in: no token (a local backlog and a plain remote need none)
      token = undefined;
    }
  }
  if (token) registerSecret(token);
  return token || undefined;
}
