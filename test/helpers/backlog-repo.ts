// What the backlog scenarios share: a repository with one commit whose `origin` is a real bare
// repository (the remote pushes land in), git run as the tests' identity, and a reviewer on the fake
// API that approves every review it is asked for.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { TEST_GIT_IDENTITY } from './git-identity.js';
import { reply, replyText, toolUse, type RecordedRequest, type Scripted } from './fake-api.js';
import { allUserTexts, lastToolResults, pastToolUses } from './team-harness.js';

export async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd, env: TEST_GIT_IDENTITY })).stdout;
}

/** `dir/work` (on main, a README committed) and `dir/remote.git`, its origin, with main pushed. */
export async function repoWithRemote(dir: string): Promise<{ root: string; remote: string }> {
  const root = path.join(dir, 'work');
  const remote = path.join(dir, 'remote.git');
  mkdirSync(root);
  await git(dir, 'init', '-q', '--bare', '-b', 'main', remote);
  await git(root, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(root, 'README.md'), '# app\n');
  await git(root, 'add', 'README.md');
  await git(root, 'commit', '-q', '-m', 'initial');
  await git(root, 'remote', 'add', 'origin', remote);
  await git(root, 'push', '-q', 'origin', 'main');
  return { root, remote };
}

/** The reviewer's next step: approve the oldest review asked for and not decided yet, with `comment`. */
export function approvingReviewer(comment: string): (request: RecordedRequest) => Scripted {
  return (request) => {
    const decided = new Set(
      pastToolUses(request)
        .filter((use) => use.name === 'review_approve')
        .map((use) => use.input.task_id),
    );
    const asked = [
      ...allUserTexts(request)
        .join('\n')
        .matchAll(/<review-requested>Task #(\d+)/g),
    ]
      .map((m) => Number(m[1]))
      .filter((id) => !decided.has(id));
    if (asked.length) return reply(toolUse('review_approve', { task_id: asked[0]!, comment }));
    if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
    return replyText('Ready to review.');
  };
}
