// huddle -p on a team in PostgreSQL (no worker connected: teammates run in the lead's process):
// a second run on the same team is refused while the first lives; Ctrl+C leaves the team to
// resume, and --resume brings the lead and its teammate back from the event record in the database.
import { type ChildProcess, execFileSync, spawn as spawnChild } from 'node:child_process';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { baseEnv, CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

describePostgres('huddle -p --team URL', (base) => {
  let fake: FakeApi;
  let ws: Workspace;
  // Every child a test starts, killed after it if a failure left it running.
  const children: ChildProcess[] = [];
  const spawn = ((...args: Parameters<typeof spawnChild>) => {
    const child = spawnChild(...args);
    children.push(child);
    return child;
  }) as typeof spawnChild;
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  beforeAll(async () => {
    fake = await startFakeApi();
  });
  afterAll(async () => {
    ws?.cleanup();
    await fake.close();
  });
  beforeEach(() => {
    ws?.cleanup();
    ws = makeWorkspace('huddle-pg-headless-');
  });

  it('refuses a second run while one lives; Ctrl+C leaves the team; --resume brings it back', { timeout: 120_000 }, async () => {
    const { url } = teamUrl(base, 'headless');
    execFileSync('git', ['init', '-q'], { cwd: ws.dir });
    fake.respond((request) => {
      if (request.agent === 'lead' && request.body.messages.length === 1)
        return reply(toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Write the notes.' }));
      return { kind: 'hang' }; // in flight when Ctrl+C comes
    });
    const env = { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off' };
    const child = spawn(process.execPath, [CLI_PATH, '-p', 'start the notes', '--team', url, '--cwd', ws.dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    await fake.waitForRequests(3, 60_000); // the lead's first call, its second, alice's first

    // The checkout keeps only local things in .team/ (the control pointer, logs), ignored by git
    // (as on files, only the .gitignore itself is for committing), and the control socket answers.
    const status = await runCli(['status', '--json', '--cwd', ws.dir], { cwd: ws.dir, timeoutMs: 30_000 });
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { agents: Array<{ name: string }> }).agents.map((a) => a.name)).toEqual(['lead', 'alice']);
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ws.dir, encoding: 'utf8' })).toBe('?? .team/.gitignore\n');

    const second = await runCli(['-p', 'me too', '--team', url, '--resume', '--cwd', ws.dir], { env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(new RegExp(`^huddle: another huddle \\(pid ${child.pid}, since .*\\) is running the team in team '[^']+' on postgres://`));

    child.kill('SIGINT');
    expect(await closed, stderr).toBe(130);

    fake.respond((request) =>
      request.agent === 'lead' ? replyText('Resumed: the notes are under way.') : request.agent === 'alice' ? replyText('Back at the notes.') : undefined,
    );
    const unfinished = await runCli(['-p', 'carry on', '--team', url, '--cwd', ws.dir], { env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
    expect(unfinished.code).toBe(2);
    expect(unfinished.stderr).toMatch(/holds an unfinished team \(lead, alice\); pass --resume/);
    const resumed = await runCli(['-p', 'carry on', '--team', url, '--resume', '--cwd', ws.dir], {
      env: { ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off' },
      timeoutMs: 60_000,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/^huddle: resumed lead, alice$/m);
    expect(resumed.stdout).toBe('Resumed: the notes are under way.\n');
    // The lead's conversation came back from the database: its first prompt is in the resumed request.
    const last = fake.requests.filter((r) => r.agent === 'lead').at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain('start the notes');
  });

  it('after a crash (SIGKILL) --resume at once takes the team back and brings its teammate back too', { timeout: 120_000 }, async () => {
    const { url } = teamUrl(base, 'crashed');
    fake.respond((request) => {
      if (request.agent === 'lead' && request.body.messages.length === 1)
        return reply(toolUse('spawn_teammate', { name: 'bob', role: 'coder', prompt: 'Write the tests.' }));
      return { kind: 'hang' };
    });
    const env = { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off' };
    const child = spawn(process.execPath, [CLI_PATH, '-p', 'start the tests', '--team', url, '--cwd', ws.dir], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const before = fake.requests.length;
    await fake.waitForRequests(before + 3, 60_000);
    child.kill('SIGKILL');
    await closed;
    fake.respond((request) =>
      request.agent === 'lead' ? replyText('Back after the crash.') : request.agent === 'bob' ? replyText('Back at the tests.') : undefined,
    );
    const resumed = await runCli(['-p', 'carry on', '--team', url, '--resume', '--cwd', ws.dir], {
      env: { ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off' },
      timeoutMs: 60_000,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/^huddle: resumed lead, bob$/m);
  });
});
