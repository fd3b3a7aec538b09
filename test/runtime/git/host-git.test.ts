// runtime/git/host-git.ts: the environment, command line and pinning of huddle's own git.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forgetPinnedRepositories, gitCommand, gitEnv, NO_PROGRAMS, pinRepository, runGit } from '../../../src/runtime/git/host-git.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import { plantedLine, quarantineBeforeStart, quarantinePlanted, snapshotGitMetadata } from '../../../src/runtime/git/planted-git.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'host-git-')));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: { ...process.env, ...TEST_GIT_IDENTITY } });
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  git('add', '.');
  git('commit', '-q', '-m', 'a');
  forgetPinnedRepositories();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("huddle's own git", () => {
  it('gets no secret in its environment, only plain variables and the quiet settings', () => {
    const env = gitEnv({
      PATH: '/bin',
      HOME: '/h',
      LC_ALL: 'C',
      ANTHROPIC_API_KEY: 'sk-x',
      GITHUB_TOKEN: 't',
      PGPASSWORD: 'p',
      HUDDLE_TEAM_URL: 'postgres://u:p@h/d',
      GIT_DIR: '/elsewhere',
      GIT_CONFIG_PARAMETERS: "'core.fsmonitor'='x'",
      GIT_SSH_COMMAND: 'x',
      AWS_SECRET_ACCESS_KEY: 's',
    });
    expect(env).toMatchObject({ PATH: '/bin', HOME: '/h', LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' });
    for (const name of [
      'ANTHROPIC_API_KEY',
      'GITHUB_TOKEN',
      'PGPASSWORD',
      'HUDDLE_TEAM_URL',
      'GIT_DIR',
      'GIT_CONFIG_PARAMETERS',
      'GIT_SSH_COMMAND',
      'AWS_SECRET_ACCESS_KEY',
    ])
      expect(env).not.toHaveProperty(name);
  });

  it('switches off every setting that runs a program, last on the command line', async () => {
    const pin = pinRepository(dir)!;
    const { args, env } = await gitCommand(dir, ['status'], { pin });
    const settings = args.filter((_, i) => args[i - 1] === '-c');
    for (const setting of [
      'core.fsmonitor=false',
      'core.hooksPath=/dev/null',
      'core.sshCommand=',
      'diff.external=',
      'core.pager=cat',
      'credential.helper=',
      'protocol.allow=never',
      'core.askPass=',
      'core.alternateRefsCommand=',
    ]) {
      expect(settings).toContain(setting);
    }
    expect(args.slice(-1)).toEqual(['status']);
    expect(args.slice(-1 - NO_PROGRAMS.length, -1)).toEqual([...NO_PROGRAMS]);
    expect(env).toMatchObject({ GIT_DIR: path.join(dir, '.git'), GIT_COMMON_DIR: path.join(dir, '.git'), GIT_WORK_TREE: dir });
  });

  it('pins the common dir: a commondir planted later, or planted before, is not followed', async () => {
    const pin = pinRepository(dir)!;
    const evil = path.join(dir, 'evil');
    mkdirSync(evil);
    writeFileSync(path.join(dir, '.git', 'commondir'), `${evil}\n`);
    const seen = await runGit(dir, ['rev-parse', '--git-common-dir'], { pin });
    expect(seen.stdout.trim()).toBe(path.join(dir, '.git'));
    // A process that resolves it afresh (the person's huddle, later) does not take it either.
    forgetPinnedRepositories();
    execFileSync('sh', [
      '-c',
      `ln -s ${dir}/.git/objects ${evil}/objects && ln -s ${dir}/.git/refs ${evil}/refs && printf '[core]\\n\\trepositoryformatversion = 0\\n' > ${evil}/config`,
    ]);
    const fresh = pinRepository(dir)!;
    expect(fresh.commonDir).toBe(path.join(dir, '.git'));
    expect(fresh.ignoredCommondir).toBe(evil);
  });

  it('switches off a filter defined in a file an agent could write, keeps the settings of the trusted config', async () => {
    writeFileSync(path.join(dir, 'team.gitconfig'), '[filter "x"]\n\tclean = ./x.sh\n[diff "y"]\n\ttextconv = ./y.sh\n[credential]\n\thelper = ./z.sh\n');
    execFileSync('git', ['config', 'include.path', '../team.gitconfig'], { cwd: dir });
    execFileSync('git', ['config', 'filter.lfs.clean', 'git-lfs clean -- %f'], { cwd: dir });
    const { args } = await gitCommand(dir, ['diff'], { pin: pinRepository(dir)! });
    const settings = args.filter((_, i) => args[i - 1] === '-c');
    expect(settings).toEqual(
      expect.arrayContaining([
        'filter.x.clean=',
        'filter.x.smudge=',
        'filter.x.process=',
        'filter.x.required=false',
        'diff.y.textconv=',
        'diff.y.command=',
        'credential.helper=',
      ]),
    );
    expect(settings.some((s) => s.startsWith('filter.lfs.'))).toBe(false);
  });

  it('in a teammate checkout, every program setting of its own config is switched off', async () => {
    execFileSync('git', ['config', 'filter.z.smudge', './s.sh'], { cwd: dir });
    const { args, env } = await gitCommand(dir, ['status'], { checkout: true });
    expect(args).toEqual(expect.arrayContaining(['filter.z.smudge=']));
    expect(env).not.toHaveProperty('GIT_DIR');
  });

  it('outside every repository, finds none without running git, and finds one made later', () => {
    const outside = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'host-git-none-')));
    const bin = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'host-git-bin-')));
    const log = path.join(bin, 'runs');
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec /usr/bin/git "$@"\n`, { mode: 0o755 });
    const before = process.env.PATH;
    process.env.PATH = `${bin}:${before ?? '/usr/bin:/bin'}`;
    try {
      expect(pinRepository(outside)).toBeUndefined();
      expect(existsSync(log)).toBe(false);
      // A bare repository around it: git's discovery is asked (it looks like a git dir).
      const bare = path.join(outside, 'bare.git');
      execFileSync('git', ['init', '-q', '--bare', bare]);
      mkdirSync(path.join(bare, 'sub'));
      expect(pinRepository(path.join(bare, 'sub'))).toBeUndefined();
      expect(readFileSync(log, 'utf8')).toContain('rev-parse');
      // Not remembered as "none": a repository made there later is found.
      execFileSync('git', ['init', '-q', outside]);
      expect(pinRepository(outside)?.workTree).toBe(outside);
    } finally {
      process.env.PATH = before;
      rmSync(outside, { recursive: true, force: true });
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("takes a linked worktree's commondir (git writes it there)", () => {
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'side', path.join(dir, 'wt')], { cwd: dir, env: { ...process.env, ...TEST_GIT_IDENTITY } });
    const pin = pinRepository(path.join(dir, 'wt'))!;
    expect(pin.commonDir).toBe(path.join(dir, '.git'));
    expect(pin.gitDir).toBe(path.join(dir, '.git', 'worktrees', 'wt'));
    expect(pin.workTree).toBe(path.join(dir, 'wt'));
    expect(pin.ignoredCommondir).toBeUndefined();
  });
});

describe('planted git metadata', () => {
  it('a commondir already there as the session opens is moved aside and named', async () => {
    mkdirSync(path.join(dir, 'evil'));
    writeFileSync(path.join(dir, '.git', 'commondir'), `${dir}/evil\n`);
    const snapshot = snapshotGitMetadata(dir)!;
    const found = quarantineBeforeStart(snapshot, path.join(dir, '.team'), new Date('2026-01-02T03:04:05Z'));
    expect(found.map(plantedLine)).toEqual([
      expect.stringMatching(
        /^planted git metadata: \.git\/commondir \(points git at .*evil; .*\) — moved to \.team\/quarantine\/2026-01-02T03-04-05-000Z\/\.git\/commondir/,
      ),
    ]);
    expect(existsSync(path.join(dir, '.git', 'commondir'))).toBe(false);
    // With the file gone, the pinned repository reads in full (git's ref store read the file, not GIT_COMMON_DIR).
    expect((await runGit(dir, ['rev-parse', '--verify', 'HEAD'], { pin: snapshot.pin })).code).toBe(0);
    expect(quarantinePlanted(snapshot, path.join(dir, '.team'))).toEqual([]);
  });

  it('moves aside what is new, keeps every byte, and only reports what changed', () => {
    writeFileSync(path.join(dir, '.git', 'info', 'attributes'), 'old\n');
    const snapshot = snapshotGitMetadata(dir)!;
    writeFileSync(path.join(dir, '.git', 'info', 'attributes'), '* filter=x\n');
    writeFileSync(path.join(dir, '.git', 'config.worktree'), '[core]\n\tfsmonitor = /x\n');
    const found = quarantinePlanted(snapshot, path.join(dir, '.team'), new Date('2026-01-02T03:04:05Z'));
    expect(found).toEqual([
      { path: '.git/config.worktree', what: expect.any(String), moved_to: '.team/quarantine/2026-01-02T03-04-05-000Z/.git/config.worktree' },
      { path: '.git/info/attributes', what: expect.stringContaining('changed during the run'), remove: expect.any(String) },
    ]);
    expect(readFileSync(path.join(dir, '.team/quarantine/2026-01-02T03-04-05-000Z/.git/config.worktree'), 'utf8')).toContain('fsmonitor = /x');
    expect(quarantinePlanted(snapshot, path.join(dir, '.team')).map((p) => p.path)).toEqual(['.git/info/attributes']);
  });
});
