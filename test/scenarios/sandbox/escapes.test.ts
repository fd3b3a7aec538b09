// The OS sandbox on its own (the deny-list not in the way): every command below runs for real
// through the bash tool, in a workspace beside a throwaway victim directory, and tries to break
// out. Afterwards every victim byte is intact, and so is the main checkout a teammate works beside.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import type { PermissionMode } from '../../../src/runtime/permissions/permission-mode.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { ensureWorktree } from '../../../src/runtime/workspace/worktree.js';
import { useTestGitIdentity } from '../../helpers/git-identity.js';
import { makeToolContext } from '../../helpers/tool-context.js';
import { describeSandboxed, expectSame, makeArena, snapshotTree, type Arena } from '../../helpers/sandbox-arena.js';

useTestGitIdentity();
const registry = new ToolRegistry(coreTools());

function bash(workspace: Workspace, command: string, mode: PermissionMode = 'auto') {
  const context = { ...makeToolContext(workspace.root), workspace, permissionMode: mode };
  return registry.run('bash', { command, timeout_ms: 60_000 }, context);
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd })).stdout;
}

/** Commands aimed at the victim directory from anywhere: none may change a byte of it. */
function victimAttacks(victim: string): string[] {
  return [
    `rm -rf ${victim}`,
    `rm -rf ${victim}/*`,
    `find ${victim} -exec rm -f {} \\;`,
    `find ${victim} -delete`,
    `mkdir -p empty && rsync -a --delete empty/ ${victim}/`,
    `chmod -R a-rwx ${victim}`,
    `mv ${victim}/keep.txt .`,
    `echo pwned > ${victim}/keep.txt`,
    `echo pwned >> ${victim}/secret.txt`,
    `touch ${victim}/new-file`,
    `ln ${victim}/keep.txt hard-link && echo pwned >> hard-link`,
    `ln -s ${victim} via-link && rm -rf via-link/ && echo pwned > via-link/keep.txt`,
    `cp /dev/null ${victim}/keep.txt`,
    `truncate -s 0 ${victim}/keep.txt`,
    `printf 'x\\n' > data.txt && sort --compress-program=sh -S 1 -T ${victim} data.txt`,
    `node -e "require('fs').writeFileSync('${victim}/keep.txt', 'pwned')"`,
    `python3 -c "open('${victim}/keep.txt','w').write('pwned')"`,
    `f(){ "$@"; }; f rm -rf ${victim}`,
    `set -- rm -rf ${victim}; "$@"`,
    `IFS=,; x="rm,-rf,${victim}"; $x`,
    `git -C ${victim} init -q`,
    `mount -t tmpfs none ${victim}`,
    `unshare -Urm sh -c 'mount -o remount,rw ${victim} && rm -rf ${victim}'`,
  ];
}

let arena: Arena;
beforeAll(() => {
  arena = makeArena('escapes-');
});
afterAll(() => arena.cleanup());

describeSandboxed('the sandbox holds on its own', () => {
  it('a command in the workspace cannot change a byte outside it; inside, work goes on', async () => {
    const before = arena.snapshot();
    const workspace = new Workspace(arena.ws);
    for (const command of victimAttacks(arena.victim)) await bash(workspace, command);
    expectSame(arena.snapshot(), before, 'the victim');
    // Reading outside is allowed; writing the workspace and /tmp is.
    const ok = await bash(workspace, `cat ${arena.victim}/keep.txt && echo made > made.txt && echo tmp > /tmp/t && cat /tmp/t && echo "$TMPDIR"`);
    expect(ok.content).toBe('victim: every byte must stay\ntmp\n/tmp');
    expect(readFileSync(path.join(arena.ws, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it("keeps huddle's team state, the repository's config and hooks read-only in the main checkout", async () => {
    const main = path.join(arena.base, 'state');
    mkdirSync(path.join(main, '.team'), { recursive: true });
    writeFileSync(path.join(main, '.team', 'allow.json'), '[]\n');
    await git(main, 'init', '-q', '-b', 'main');
    const workspace = new Workspace(main);
    const result = await bash(
      workspace,
      'echo \'["rm"]\' > .team/allow.json; git config alias.x "!touch pwned"; echo "touch pwned" > .git/hooks/post-merge; echo ok > fine.txt; git add fine.txt && git commit -qm ok && echo committed',
    );
    expect(result.content).toContain('committed');
    expect(readFileSync(path.join(main, '.team', 'allow.json'), 'utf8')).toBe('[]\n');
    expect(readFileSync(path.join(main, '.git', 'config'), 'utf8')).not.toContain('alias');
    expect(existsSync(path.join(main, '.git', 'hooks', 'post-merge'))).toBe(false);
  });

  it('plan mode writes nothing at all, not even in the workspace', async () => {
    const workspace = new Workspace(arena.ws);
    const before = snapshotTree(arena.ws);
    const result = await bash(
      workspace,
      `touch planned.txt; echo x > /tmp/x && cat /tmp/x; printf 'b\\na\\n' | sort --compress-program=sh -S 1 -T . ; git grep -O'touch opened' x; ls`,
      'plan',
    );
    expect(result.content).toMatch(/Read-only file system/);
    expectSame(snapshotTree(arena.ws), before, 'the workspace in plan mode');
  });

  it('a worktree teammate cannot touch the main checkout, another teammate, or their git data', async () => {
    const main = path.join(arena.base, 'main');
    mkdirSync(main);
    await git(main, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(main, 'f.txt'), 'committed\n');
    await git(main, 'add', 'f.txt');
    await git(main, 'commit', '-q', '-m', 'initial');
    writeFileSync(path.join(main, 'f.txt'), 'uncommitted work\n');
    writeFileSync(path.join(main, 'untracked.txt'), 'untracked\n');
    mkdirSync(path.join(main, '.team'), { recursive: true });
    writeFileSync(path.join(main, '.team', 'config.json'), '{"team_name":"t"}\n');
    const alice = await ensureWorktree(main, 'alice');
    const bob = await ensureWorktree(main, 'bob');
    writeFileSync(path.join(bob.path, 'wip.txt'), 'bob wip\n');
    const mine = (relative: string) => /^\.team\/worktrees\/alice(\.git)?(\/|$)/.test(relative);
    // Without the hook that mirrors alice's branch into main: nothing at all may change there.
    const workspace = new Workspace(alice.workspace.root, alice.workspace.sandboxRoots());

    // Its own checkout is its own: it commits on its branch (what the attacks below do to it is its business).
    const own = await bash(workspace, 'echo mine > mine.txt && git add mine.txt && git commit -qm "alice: mine" && git log -1 --format=%s');
    expect(own.content).toBe('alice: mine');

    const mainBefore = snapshotTree(main, mine);
    const victimBefore = arena.snapshot();
    const attacks = [
      'git -C ../../.. reset --hard',
      'cd ../../.. && git clean -fdx',
      'GIT_DIR=../../../.git git reset --hard',
      'git --work-tree=../../.. --git-dir=../../../.git checkout -- .',
      'git -C "$(git rev-parse --git-common-dir)/.." reset --hard',
      'git -C "$(git rev-parse --git-common-dir)/.." clean -fdx',
      'rm -rf ../../../.git',
      'rm -rf ../bob ../bob.git',
      'rm -rf ../../..',
      'echo pwned > ../../../f.txt',
      'echo pwned > ../../config.json',
      'git push -q origin HEAD:main --force',
      'git push -q origin HEAD:refs/heads/evil',
      'git -C ../../.. config alias.x "!touch pwned"',
      'git -C ../../.. branch -D huddle/bob',
      'git -C ../../.. update-ref -d refs/heads/huddle/bob',
      'ln ../../../f.txt hard && echo pwned >> hard',
      'ln -s ../../../f.txt soft && echo pwned >> soft',
      'cd ../bob && git commit -qam stolen',
      ...victimAttacks(arena.victim),
    ];
    for (const command of attacks) await bash(workspace, command);
    expectSame(snapshotTree(main, mine), mainBefore, 'the main checkout (with bob)');
    expectSame(arena.snapshot(), victimBefore, 'the victim');
    expect(readFileSync(path.join(main, 'f.txt'), 'utf8')).toBe('uncommitted work\n');
  });
});
