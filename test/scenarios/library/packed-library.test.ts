// huddle as a library, the way a program gets it (docs/library.md): `npm pack`, the tarball
// installed into a new project (--prefer-offline: dependencies from npm's cache), the example
// program (examples/team.ts) type-checked there against the published declarations with a strict
// tsc, then run by Node (type stripping) against the fake Messages API: the lead and one teammate
// do a task through the library alone.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { packHuddle, runProgram } from '../../helpers/packed-huddle.js';
import { REPO_ROOT, TEST_API_KEY } from '../../helpers/run-cli.js';

const temps: string[] = [];
let project: string;

function temp(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

beforeAll(() => {
  // dist/ (bundle and declarations) is built before the tests (npm test builds it); packing does not build it again.
  expect(existsSync(path.join(REPO_ROOT, 'dist', 'types', 'library', 'index.d.ts')), 'run npm run build first').toBe(true);
  const packDir = temp('huddle-pack-');
  const tarball = packHuddle(packDir);
  project = temp('huddle-library-project-');
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'a-team-program', private: true, type: 'module' }));
  const install = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project, encoding: 'utf8' });
  expect(install.status, install.stderr).toBe(0);
  copyFileSync(path.join(REPO_ROOT, 'examples', 'team.ts'), path.join(project, 'team.ts'));
}, 480_000);

afterAll(() => {
  // The project's node_modules: many files, slow to remove on a busy machine.
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('huddle installed as a library', () => {
  it("type-checks a strict program against the package's declarations", () => {
    // A strict project of the program's own; Node's types from this repository (a program on Node has them).
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: false,
          target: 'es2023',
          lib: ['es2023', 'esnext.disposable'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          noEmit: true,
          types: ['node'],
          typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
        },
        files: ['team.ts'],
      }),
    );
    const check = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', project], { cwd: project, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);

    // And the types do check what a program passes: a misspelt option is an error.
    writeFileSync(path.join(project, 'wrong.ts'), "import { openTeam } from 'huddle';\nawait openTeam({ workspace: '.', fersh: true });\n");
    writeFileSync(path.join(project, 'tsconfig.wrong.json'), JSON.stringify({ extends: './tsconfig.json', files: ['wrong.ts'] }));
    const wrong = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', path.join(project, 'tsconfig.wrong.json')], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).toMatch(/fersh/);
  }, 120_000);

  describe('running the example', () => {
    let fake: FakeApi;
    beforeAll(async () => {
      fake = await startFakeApi();
    });
    afterAll(async () => {
      await fake.close();
    });

    it('runs a team through the library alone: the teammate does the task, the lead finishes', async () => {
      fake.script('lead', replyText('Waiting for alice.'), replyText('alice wrote hello.txt; task #1 is done.'));
      fake.script(
        'alice',
        reply(toolUse('claim_task', { task_id: 1 })),
        reply(toolUse('write_file', { path: 'hello.txt', content: 'hello\n' }), toolUse('task_update', { task_id: 1, status: 'completed' })),
        reply(toolUse('send_message', { to: 'lead', content: 'task #1 done: hello.txt says hello' })),
        replyText('Done.'),
      );
      const workspace = temp('huddle-library-ws-');
      const home = temp('huddle-library-home-');
      mkdirSync(path.join(home, '.config'), { recursive: true });
      const env: NodeJS.ProcessEnv = {
        PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
        HOME: home,
        ANTHROPIC_API_KEY: TEST_API_KEY,
        ANTHROPIC_BASE_URL: fake.url,
        HUDDLE_RETRY_BASE_MS: '5',
        XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME,
        XDG_STATE_HOME: process.env.XDG_STATE_HOME,
        ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      };
      const result = await runProgram(process.execPath, ['team.ts', workspace], { cwd: project, env });
      expect(result.code, result.stderr + result.stdout).toBe(0);
      const summary = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
      expect(summary).toMatchObject({ end: 'settled', task: { id: 1, status: 'completed', owner: 'alice' }, lead: 'alice wrote hello.txt; task #1 is done.' });
      // What the program followed: the board's changes and alice's message, as they happened.
      expect(result.stdout).toContain('task #1 completed: completed (alice)');
      expect(result.stdout).toContain('alice -> lead: task #1 done: hello.txt says hello');
      expect(readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
      // Every model call was scripted: the lead twice (start, alice's report), alice four times.
      expect(fake.unscripted).toEqual([]);
      expect(fake.requests.filter((r) => r.agent === 'alice')).toHaveLength(4);
      // Nothing secret in what the program printed.
      expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY);
    }, 180_000);
  });
});
