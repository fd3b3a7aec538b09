// .team/ is the person's: after a real headless run with a teammate, a task and messages (the
// board, inboxes, logs, transcripts, the run record, the roster), every directory under .team/ is
// 0700 and every file 0600, with the umask at 000 (the modes come from huddle, not the umask);
// an old tree left 0755/0644 is repaired at the next start. What the team commits and shares
// (.gitignore, settings.json, budget.json, roles/) keeps its modes.
import { chmodSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { SHARED_TEAM_ENTRIES } from '../../../src/runtime/workspace/team-privacy.js';

let fake: FakeApi;
let ws: Workspace;
let umask: number;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-private-');
  // The child inherits it: with 000, anything created without an explicit mode is world-writable.
  umask = process.umask(0);
});
afterEach(async () => {
  process.umask(umask);
  await fake.close();
  ws.cleanup();
});

function modes(dir: string, relative = ''): Array<[string, string, number]> {
  const out: Array<[string, string, number]> = [];
  for (const name of readdirSync(path.join(dir, relative))) {
    const rel = path.join(relative, name);
    const info = lstatSync(path.join(dir, rel));
    const kind = info.isDirectory() ? 'dir' : info.isFile() ? 'file' : info.isSymbolicLink() ? 'link' : 'other';
    out.push([rel, kind, info.mode & 0o777]);
    if (info.isDirectory() && !rel.startsWith('worktrees/')) out.push(...modes(dir, rel));
  }
  return out;
}

function shared(rel: string): boolean {
  return SHARED_TEAM_ENTRIES.some((entry) => rel === entry || rel.startsWith(`${entry}/`));
}

it('every file under .team/ is 0600 and every directory 0700 after a run, whatever the umask; an old tree is repaired', { timeout: 60_000 }, async () => {
  const team = path.join(ws.dir, '.team');
  // An older huddle's tree, world-readable, and the team's shared files.
  mkdirSync(path.join(team, 'logs'), { recursive: true, mode: 0o755 });
  mkdirSync(path.join(team, 'roles'), { recursive: true, mode: 0o755 });
  writeFileSync(path.join(team, 'logs', 'lead-old.jsonl'), '{}\n', { mode: 0o644 });
  writeFileSync(path.join(team, 'settings.local.json'), '{}\n', { mode: 0o666 });
  writeFileSync(path.join(team, 'settings.json'), '{}\n', { mode: 0o644 });
  writeFileSync(path.join(team, 'roles', 'tester.md'), '---\nname: tester\n---\nTests.\n', { mode: 0o644 });
  chmodSync(team, 0o755);
  chmodSync(path.join(team, 'logs'), 0o777);

  fake.respond((request) => {
    const turns = request.body.messages.length;
    if (request.agent === 'lead') {
      if (turns === 1) return reply(toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Write the notes.' }));
      return replyText('The notes are done.');
    }
    if (request.agent === 'alice') {
      if (turns === 1) return reply(toolUse('send_message', { to: 'lead', content: 'notes written' }));
      return replyText('Done.');
    }
    return undefined;
  });
  const result = await runCli(['-p', 'write the notes'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
  expect(result.code, result.stderr).toBe(0);

  const all = modes(team);
  // Not vacuous: the run kept its state here.
  for (const expected of ['logs', 'inbox', 'config.json'])
    expect(
      all.some(([rel]) => rel === expected || rel.startsWith(`${expected}/`)),
      expected,
    ).toBe(true);
  expect(all.some(([rel]) => /^logs\/run-.*\.json$/.test(rel))).toBe(true);
  const wrong = all.filter(([rel, kind, mode]) => !shared(rel) && (kind === 'dir' ? mode !== 0o700 : kind === 'file' ? mode !== 0o600 : false));
  expect(wrong.map(([rel, kind, mode]) => `${kind} ${rel} ${mode.toString(8)}`)).toEqual([]);
  expect(lstatSync(team).mode & 0o777).toBe(0o700);
  // The shared files are left as the team keeps them.
  expect(lstatSync(path.join(team, 'settings.json')).mode & 0o777).toBe(0o644);
  expect(lstatSync(path.join(team, 'roles', 'tester.md')).mode & 0o777).toBe(0o644);
});
