// Teammates in their own git worktrees, driven through the fake Messages API: their file tools
// and shell work in the worktree (and cannot leave it), their branches merge back through the
// console's /merge (a conflict is aborted with both sides kept), /diff shows a worktree in its
// pane, /worktree remove guards unmerged work, and a workspace without git gets a clear answer.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestGitIdentity } from '../../helpers/git-identity.js';
import { resolveConfig } from '../../../src/runtime/config.js';
import { NOT_A_REPO_MESSAGE } from '../../../src/runtime/workspace/worktree.js';
import { runCommandLine } from '../../../src/tui/commands/dispatch.js';
import { itemLines } from '../../../src/tui/render/transcript-lines.js';
import { ConsoleController } from '../../../src/tui/console-controller.js';
import { createConsoleStore } from '../../../src/tui/state/console-store.js';
import { reply, replyText, toolUse } from '../../helpers/fake-api.ts';
import { lastToolResults, openTeamHarness, systemText, type TeamHarness } from '../../helpers/team-harness.ts';

useTestGitIdentity();

let harness: TeamHarness | undefined;
let controller: ConsoleController | undefined;
afterEach(async () => {
  controller?.close();
  controller = undefined;
  await harness?.close();
  harness = undefined;
});

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd })).stdout;
}

/** The workspace becomes a repository on `main` whose one commit holds shared.txt (the team state stays untracked). */
async function makeRepo(root: string): Promise<void> {
  await git(root, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(root, 'shared.txt'), 'original\n');
  await git(root, 'add', 'shared.txt');
  await git(root, 'commit', '-q', '-m', 'initial');
}

function openConsole(h: TeamHarness) {
  const store = createConsoleStore({ model: h.config.model, endpoint: '' });
  controller = new ConsoleController(h.session, store, () => undefined);
  const run = (line: string) => runCommandLine(line, { controller: controller!, state: store.getState(), focus: store.getState().focus });
  return { store, run };
}

/** A teammate that writes its version of shared.txt, tries to step out of its worktree, commits, then idles. */
function scriptEditor(h: TeamHarness, name: string): void {
  h.fake.script(
    name,
    reply(
      toolUse('write_file', { path: 'shared.txt', content: `${name} version\n` }),
      toolUse('write_file', { path: '../../../escape.txt', content: 'out of the worktree\n' }),
      toolUse('read_file', { path: '../../config.json' }),
      toolUse('bash', { command: `pwd && git rev-parse --abbrev-ref HEAD && git add -A && git commit -q -m "${name}: shared"` }),
    ),
    reply(toolUse('idle', {})),
  );
}

async function mergeInProgress(root: string): Promise<boolean> {
  return (await execa('git', ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { cwd: root, reject: false })).exitCode === 0;
}

describe('teammates with worktrees', () => {
  it('work in their own worktrees; /merge brings one in and aborts the conflicting other with nothing lost', async () => {
    harness = await openTeamHarness();
    const h = harness;
    await makeRepo(h.root);
    scriptEditor(h, 'alice');
    scriptEditor(h, 'bob');
    const said = await h.team.spawn({ name: 'alice', role: 'coder', prompt: 'Change shared.txt and commit.', worktree: true }, 'lead');
    expect(said).toContain('new worktree .team/worktrees/alice on huddle/alice');
    await h.team.spawn({ name: 'bob', role: 'coder', prompt: 'Change shared.txt and commit.', worktree: true }, 'lead');
    await h.waitForStatus('alice', 'idle');
    await h.waitForStatus('bob', 'idle');

    const aliceDir = path.join(h.workspace.root, '.team', 'worktrees', 'alice');
    const bobDir = path.join(h.workspace.root, '.team', 'worktrees', 'bob');
    expect(h.team.ctx.roster.get('alice')?.worktree).toBe(path.join('.team', 'worktrees', 'alice'));
    expect(systemText(h.requestsOf('alice')[0]!)).toContain(`your own git worktree, ${aliceDir}, on branch huddle/alice`);

    // The file tools and the shell ran in the worktree; `..` out of it was refused.
    const results = lastToolResults(h.requestsOf('alice')[1]!);
    expect(results.map((r) => r.is_error)).toEqual([false, true, true, false]);
    expect(results[1]!.content).toContain("path '../../../escape.txt' is outside the workspace");
    expect(results[2]!.content).toContain("path '../../config.json' is outside the workspace");
    expect(results[3]!.content).toBe(`${aliceDir}\nhuddle/alice`);
    expect(existsSync(path.join(h.root, 'escape.txt'))).toBe(false);
    expect(readFileSync(path.join(h.root, 'shared.txt'), 'utf8')).toBe('original\n');
    expect(readFileSync(path.join(aliceDir, 'shared.txt'), 'utf8')).toBe('alice version\n');
    expect(await git(h.root, 'log', '-1', '--format=%s', 'huddle/bob')).toBe('bob: shared');

    const { store, run } = openConsole(h);
    expect(await run('/diff bob')).toEqual({ kind: 'ok', message: 'diff of huddle/bob against main' });
    expect(store.getState()).toMatchObject({ focus: 'bob', view: 'pane' });
    const shown = store.getState().agents.bob!.items.at(-1)!;
    expect(shown.kind).toBe('diff');
    expect(shown.kind === 'diff' && shown.diff).toMatch(/-original\n\+bob version/);
    const lines = itemLines(shown, 60, false).map(stripVTControlCharacters);
    expect(lines[0]).toBe('huddle/bob against main: 1 unmerged commit(s)');
    expect(lines).toContain('+bob version');

    expect(await run('/merge alice')).toEqual({ kind: 'ok', message: 'merged huddle/alice into main (1 commit)' });
    expect(readFileSync(path.join(h.root, 'shared.txt'), 'utf8')).toBe('alice version\n');
    const head = await git(h.root, 'rev-parse', 'HEAD');
    const listed = await run('/worktree');
    expect(listed).toMatchObject({ kind: 'page', title: expect.stringMatching(/^Teammate worktrees \(2\)/) });
    expect(listed.kind === 'page' && listed.lines).toEqual([
      'alice: .team/worktrees/alice, huddle/alice, 0 unmerged commit(s) against main, 0 uncommitted file(s)',
      'bob: .team/worktrees/bob, huddle/bob, 1 unmerged commit(s) against main, 0 uncommitted file(s)',
    ]);

    const conflict = await run('/merge bob');
    expect(conflict).toEqual({ kind: 'error', message: 'merge of huddle/bob conflicts in shared.txt; aborted, both branches unchanged (details in the pane)' });
    // The details go to the pane in view (bob's, since /diff brought it up).
    const notice = store.getState().agents.bob!.items.at(-1)!;
    expect(notice).toMatchObject({ kind: 'notice', tone: 'error' });
    expect(notice.kind === 'notice' && notice.text).toMatch(/conflicts in shared\.txt[\s\S]*CONFLICT \(content\): Merge conflict in shared\.txt/);
    // Neither side lost: main as merged, not mid-merge; bob's branch and worktree as bob left them.
    expect(await mergeInProgress(h.root)).toBe(false);
    expect(await git(h.root, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(await git(h.root, 'rev-parse', 'HEAD')).toBe(head);
    expect(readFileSync(path.join(h.root, 'shared.txt'), 'utf8')).toBe('alice version\n');
    expect(await git(h.root, 'log', '-1', '--format=%s', 'huddle/bob')).toBe('bob: shared');
    expect(await git(h.root, 'log', '--format=%s', 'main')).toContain('alice: shared');
    expect(readFileSync(path.join(bobDir, 'shared.txt'), 'utf8')).toBe('bob version\n');

    // Removal waits for the teammate to stop, then for its work to be merged, unless forced.
    expect(await run('/worktree remove bob')).toMatchObject({ kind: 'error', message: 'bob is still running in its worktree; /shutdown bob first' });
    const bob = h.team.teammates.get('bob')!;
    bob.stopNow('test');
    await bob.done;
    expect(await run('/worktree remove bob')).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^huddle\/bob has 1 commit not merged into main/),
    });

    // Spawned again, bob gets its worktree back with its work in it.
    h.fake.script('bob', reply(toolUse('read_file', { path: 'shared.txt' })), reply(toolUse('idle', {})));
    const respawned = await h.team.spawn({ name: 'bob', role: 'coder', prompt: 'Look at shared.txt.' }, 'lead');
    expect(respawned).toContain('reused worktree .team/worktrees/bob on huddle/bob');
    await h.waitFor('bob to read its file', () => h.requestsOf('bob').length >= 4 || undefined);
    expect(lastToolResults(h.requestsOf('bob')[3]!)[0]!.content).toContain('bob version');
    const again = h.team.teammates.get('bob')!;
    again.stopNow('test');
    await again.done;

    expect(await run('/worktree remove bob --force')).toMatchObject({
      kind: 'ok',
      message: expect.stringMatching(/^removed \.team\/worktrees\/bob; deleted huddle\/bob with 1 unmerged commit/),
    });
    expect(existsSync(bobDir)).toBe(false);
    const alice = h.team.teammates.get('alice')!;
    alice.stopNow('test');
    await alice.done;
    expect(await run('/worktree remove alice')).toEqual({ kind: 'ok', message: 'removed .team/worktrees/alice; deleted huddle/alice' });
    expect(await git(h.root, 'branch', '--list', 'huddle/*')).toBe('');
  });

  it('takes the worktree default from the role front matter', async () => {
    harness = await openTeamHarness();
    const h = harness;
    await makeRepo(h.root);
    mkdirSync(path.join(h.root, '.team', 'roles'), { recursive: true });
    writeFileSync(path.join(h.root, '.team', 'roles', 'isolated.md'), '---\nworktree: true\n---\nWork alone.\n');
    h.fake.script('dana', replyText('ready'));
    expect(await h.team.spawn({ name: 'dana', role: 'isolated', prompt: 'Wait.' }, 'lead')).toContain('new worktree .team/worktrees/dana');
    expect(h.team.ctx.roster.get('dana')?.worktree).toBe(path.join('.team', 'worktrees', 'dana'));
  });

  it('tells a workspace that is not a git repository what to do', async () => {
    harness = await openTeamHarness({ env: { HUDDLE_WORKTREES: '1' } });
    const h = harness;
    // The lead's spawn_teammate gets the message as a tool error.
    h.fake.script('lead', reply(toolUse('spawn_teammate', { name: 'carol', role: 'coder', prompt: 'Work.', worktree: true })), replyText('noted'));
    h.team.start();
    h.team.lead.prompt('Spawn carol in a worktree.');
    await h.waitFor('the lead to see the spawn result', () => h.requestsOf('lead').length >= 2 || undefined);
    const [result] = lastToolResults(h.requestsOf('lead')[1]!);
    expect(result).toMatchObject({ is_error: true, content: expect.stringContaining(NOT_A_REPO_MESSAGE) });
    expect(h.team.ctx.roster.get('carol')).toBeUndefined();

    // HUDDLE_WORKTREES=1 makes worktrees the default; worktree: false still runs in the workspace.
    await expect(h.team.spawn({ name: 'dave', role: 'coder', prompt: 'Work.' }, 'lead')).rejects.toThrow(NOT_A_REPO_MESSAGE);
    h.fake.script('erin', replyText('ready'));
    expect(await h.team.spawn({ name: 'erin', role: 'coder', prompt: 'Work.', worktree: false }, 'lead')).not.toContain('worktree');
    expect(h.team.ctx.roster.get('erin')?.worktree).toBeUndefined();

    const { run } = openConsole(h);
    expect(await run('/merge erin')).toEqual({ kind: 'error', message: NOT_A_REPO_MESSAGE });
    expect(await run('/worktree remove')).toEqual({ kind: 'error', message: 'usage: /worktree [list | remove NAME [--force]]' });
  });

  it('reads HUDDLE_WORKTREES as a yes or no', () => {
    expect(resolveConfig({}, { HUDDLE_WORKTREES: '1' }).worktrees).toBe(true);
    expect(resolveConfig({}, { HUDDLE_WORKTREES: 'false' }).worktrees).toBe(false);
    expect(resolveConfig({}, {}).worktrees).toBe(false);
    expect(() => resolveConfig({}, { HUDDLE_WORKTREES: 'maybe' })).toThrow("HUDDLE_WORKTREES must be 1 or 0 (true or false), not 'maybe'");
  });
});
