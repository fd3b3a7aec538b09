// The local backlog (docs/backlog.md#a-local-backlog): one issue per file with YAML front matter,
// checked with zod; a bad file is one line and skipped, the rest are read; dependencies ordered,
// cycles and unknown dependencies skipped with their reason.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadLocalBacklog } from '../../../src/runtime/backlog/local-backlog.js';
import { issueBranch, issueSlugName, orderIssues } from '../../../src/runtime/backlog/issue.js';
import { dependenciesInBody } from '../../../src/runtime/forge/github.js';
import { parseGitHubSource, repoOfRemote } from '../../../src/runtime/forge/github-repo.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'huddle-backlog-'));
  dirs.push(root);
  mkdirSync(path.join(root, '.team', 'backlog'), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(root, '.team', 'backlog', name), text);
  return root;
}

describe('the local backlog', () => {
  it('reads good files and skips each bad one with one line', () => {
    const root = workspace({
      '1-greeting.md': '---\ntitle: Add a greeting\nlabels: [feature]\n---\nWrite hello.txt.\n\n## Acceptance\n- hello.txt says hello\n',
      '2-farewell.md': '---\ntitle: Add a farewell\ndepends-on: 1\n---\nWrite bye.txt.\n',
      'notes.md': '---\nnumber: 7\ntitle: Numbered in the front matter\ndepends-on: [1, 2]\n---\n',
      'no-front.md': 'Just text.\n',
      'bad-yaml.md': '---\ntitle: [unclosed\n---\n',
      'extra.md': '---\nnumber: 9\ntitle: X\nowner: me\n---\n',
      '3-empty-title.md': '---\ntitle: "  "\n---\n',
      'no-number.md': '---\ntitle: Which one?\n---\n',
      'dup.md': '---\nnumber: 1\ntitle: Same number\n---\n',
      'ignored.txt': 'not markdown',
    });
    const backlog = loadLocalBacklog(root);
    expect(backlog.issues.map((i) => [i.number, i.title, i.dependsOn])).toEqual([
      [1, 'Add a greeting', []],
      [2, 'Add a farewell', [1]],
      [7, 'Numbered in the front matter', [1, 2]],
    ]);
    expect(backlog.issues[0]!.body).toContain('## Acceptance');
    expect(backlog.issues[0]!.labels).toEqual(['feature']);
    const reasons = Object.fromEntries(backlog.skipped.map((s) => [path.basename(s.source), s.reason]));
    expect(reasons).toEqual({
      'dup.md': 'issue number 1 is taken by .team/backlog/1-greeting.md',
      '3-empty-title.md': 'title: title is empty',
      'bad-yaml.md': expect.stringMatching(/^front matter is not YAML: /),
      'extra.md': expect.stringMatching(/owner/),
      'no-front.md': 'no front matter (the file must start with --- and a title: line)',
      'no-number.md': expect.stringMatching(/^no issue number/),
    });
    for (const reason of Object.values(reasons)) expect(reason).not.toContain('\n');
  });

  it('says where to put a backlog when there is none', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'huddle-backlog-'));
    dirs.push(root);
    expect(loadLocalBacklog(root)).toEqual({ issues: [], skipped: [{ source: '.team/backlog', reason: expect.stringMatching(/^no such directory/) }] });
  });

  it('orders dependencies first and skips cycles and unknown dependencies, not the rest', () => {
    const issue = (number: number, dependsOn: number[] = []) => ({ number, title: `t${number}`, labels: [], dependsOn, body: '', source: `${number}.md` });
    const ordered = orderIssues({ issues: [issue(3, [1]), issue(1), issue(2, [3]), issue(5, [6]), issue(6, [5]), issue(8, [42]), issue(9, [8])], skipped: [] });
    expect(ordered.issues.map((i) => i.number)).toEqual([1, 3, 2]);
    expect(ordered.skipped.map((s) => `${s.source}: ${s.reason}`)).toEqual([
      '5.md: depends-on makes a cycle: #5 → #6 → #5',
      '6.md: depends on #5, which was skipped',
      '8.md: depends on #42, which is not in the backlog',
      '9.md: depends on #8, which was skipped',
    ]);
  });

  it('names branches and teammates after the issue, within the name rule', () => {
    expect(issueSlugName({ number: 12, title: 'Add a login page!' })).toBe('issue-12-add-a-login-page');
    expect(issueBranch({ number: 3, title: 'Über   long title that goes on and on and on' })).toBe('huddle/issue-3-uber-long-title-that');
    expect(issueSlugName({ number: 4, title: '日本語' })).toBe('issue-4');
  });

  it('reads GitHub sources, remotes and dependencies named in an issue body', () => {
    expect(parseGitHubSource('github:acme/app?label=ready')).toEqual({ owner: 'acme', repo: 'app', labels: 'ready', milestone: undefined, query: undefined });
    expect(parseGitHubSource('github:acme')).toMatch(/is not github:OWNER\/REPO/);
    expect(parseGitHubSource('github:acme/app?assignee=me')).toMatch(/'assignee' is not a filter/);
    expect(repoOfRemote('git@github.com:acme/app.git')).toEqual({ owner: 'acme', repo: 'app' });
    expect(repoOfRemote('https://github.com/acme/app')).toEqual({ owner: 'acme', repo: 'app' });
    expect(repoOfRemote('https://ghe.example.com/acme/app.git', 'ghe.example.com')).toEqual({ owner: 'acme', repo: 'app' });
    expect(repoOfRemote('/srv/git/app.git')).toBeUndefined();
    expect(dependenciesInBody('Intro\nDepends on #3 and #4\n- depends-on: #9\nmentions #5')).toEqual([3, 4, 9]);
  });
});
