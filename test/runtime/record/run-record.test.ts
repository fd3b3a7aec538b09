// The run record (runtime/record): summed from the events, plus the board, spend and git; written
// to .team/logs/run-<stamp>.json and summed up as the last lines on stderr of a headless run.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventHub, type HuddleEvent } from '../../../src/runtime/events/events.js';
import { RunRecorder, summaryLines } from '../../../src/runtime/record/run-record.js';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

/** A known git identity and no user or system config, for the test's git and the agent's bash alike. */
const GIT_IDENTITY = TEST_GIT_IDENTITY;

describe('RunRecorder', () => {
  it('sums usage, commands, tests, permissions and reviews from the events', () => {
    const hub = new EventHub();
    const recorder = new RunRecorder(new Date(Date.now() - 5_000));
    const seen: HuddleEvent[] = [];
    hub.subscribe((event) => (seen.push(event), recorder.onEvent(event)));
    const usage = {
      input_tokens: 100,
      output_tokens: 10,
      cache_creation_input_tokens: 200,
      cache_read_input_tokens: 700,
      cost_usd: 0.01,
      total_cost_usd: 0.01,
      total_input_tokens: 100,
      total_output_tokens: 10,
      context_tokens: 1000,
      model: 'm',
    };
    hub.emit('lead', 'usage', usage);
    hub.emit('alice', 'usage', { ...usage, cost_usd: 0.02 });
    hub.emit('alice', 'tool_call', { id: 't1', name: 'bash', input: { command: 'npm test' }, summary: 'npm test' });
    hub.emit('alice', 'tool_result', { id: 't1', name: 'bash', ok: false, content: '1 failed\n[exit code 1]', duration_ms: 40 });
    hub.emit('alice', 'tool_call', { id: 't2', name: 'bash', input: { command: 'ls' }, summary: 'ls' });
    hub.emit('alice', 'tool_result', { id: 't2', name: 'bash', ok: true, content: 'a\n[exit code 0]', duration_ms: 3 });
    hub.emit('alice', 'tool_result', {
      id: 't3',
      name: 'task_update',
      ok: true,
      content: 'task #1 completed\nverify passed: npm run check (exit 0, 1.2 s)',
      duration_ms: 1300,
    });
    hub.emit('bob', 'tool_call', { id: 't4', name: 'review_request_changes', input: { task_id: 1, feedback: 'add a test' }, summary: '' });
    hub.emit('bob', 'tool_call', { id: 't5', name: 'review_approve', input: { task_id: 1 }, summary: '' });
    hub.emit('alice', 'approval_requested', { id: 'a1', tool: 'bash', summary: 'curl x', reason: 'not on the allow-list', prefixes: ['curl'] });
    hub.emit('alice', 'approval_resolved', { id: 'a1', decision: 'approve', by: 'user' });
    hub.emit('alice', 'approval_requested', { id: 'a2', tool: 'bash', summary: 'rm x', reason: 'not on the allow-list', prefixes: [] });
    hub.emit('alice', 'approval_resolved', { id: 'a2', decision: 'deny', by: 'user' });

    const now = new Date();
    const record = recorder.build(
      {
        tasks: [
          {
            id: 1,
            subject: 'do it',
            description: '',
            status: 'completed',
            owner: 'alice',
            blockedBy: [],
            blocks: [],
            created_at: '',
            updated_at: '',
            reviewer: 'bob',
          },
        ],
      },
      now,
    );
    expect(record.model_calls).toBe(2);
    expect(record.cost.total_usd).toBeCloseTo(0.03);
    expect(record.cost.agents.alice).toMatchObject({ cost_usd: 0.02, model_calls: 1, cache_read_input_tokens: 700, cache_creation_input_tokens: 200 });
    expect(record.tokens).toMatchObject({ input: 200, output: 20, cache_read: 1400, cache_write: 400 });
    expect(record.tokens.cache_hit_ratio).toBeCloseTo(1400 / 2000);
    expect(record.commands).toEqual({
      count: 2,
      list: [
        { agent: 'alice', command: 'npm test', ok: false, exit_code: 1, duration_ms: 40 },
        { agent: 'alice', command: 'ls', ok: true, exit_code: 0, duration_ms: 3 },
      ],
    });
    expect(record.tests).toEqual([
      { agent: 'alice', command: 'npm test', passed: false, exit_code: 1, via: 'bash' },
      { agent: 'alice', command: 'npm run check', passed: true, exit_code: 0, via: 'verify' },
    ]);
    expect(record.reviews).toEqual([
      { agent: 'bob', task_id: 1, verdict: 'changes_requested', comment: 'add a test' },
      { agent: 'bob', task_id: 1, verdict: 'approved' },
    ]);
    expect(record.permissions.asked).toHaveLength(2);
    expect(record.permissions.granted).toEqual([{ agent: 'alice', tool: 'bash', summary: 'curl x', decision: 'approve', by: 'user' }]);
    expect(record.permissions.denied).toEqual([{ agent: 'alice', tool: 'bash', summary: 'rm x', by: 'user' }]);
    expect(record.tasks.done).toEqual([{ id: 1, subject: 'do it', by: 'alice', reviewer: 'bob' }]);
    expect(record.files).toBeNull();
    expect(record.wall_ms).toBeGreaterThanOrEqual(5_000);
    const lines = summaryLines(record);
    expect(lines[0]).toContain('tasks: 1 done (alice 1), 0 open');
    expect(lines[0]).toContain('tests: 1 passed, 1 failed');
    expect(lines[1]).toBe('commands: 2 · permissions: 2 asked, 1 granted, 1 denied · reviews: 2');
    expect(lines[2]).toContain('(70% cache reads');
  });
});

describe('a headless run ends with its run record', () => {
  let fake: FakeApi;
  let ws: Workspace;
  beforeEach(async () => {
    fake = await startFakeApi();
    ws = makeWorkspace('huddle-record-');
  });
  afterEach(async () => {
    await fake.close();
    ws.cleanup();
  });

  it('files and commits from git, the test run, cost and cache ratio; the last lines on stderr, not stdout', async () => {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ws.dir, env: { ...process.env, ...GIT_IDENTITY } });
    git('init', '-q', '-b', 'main');
    writeFileSync(path.join(ws.dir, 'README.md'), 'one\ntwo\nthree\n');
    writeFileSync(path.join(ws.dir, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test: 'echo all tests pass' } }));
    git('add', '.');
    git('commit', '-q', '-m', 'start');
    fake.enqueue(
      reply(
        text('Editing.'),
        toolUse('write_file', { path: 'README.md', content: 'one\nTWO\nthree\nfour\n' }),
        toolUse('write_file', { path: 'src/new.txt', content: 'a\nb\n' }),
      ),
      reply(toolUse('bash', { command: 'git add README.md && git commit -q -m "Shout two"' })),
      reply(toolUse('bash', { command: 'npm test' })),
      replyText('Done.'),
    );
    const run = await runCli(['-p', 'change the readme'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url, ...GIT_IDENTITY } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('Done.\n');

    const logs = path.join(ws.dir, '.team', 'logs');
    const files = readdirSync(logs).filter((name) => /^run-.+\.json$/.test(name));
    expect(files).toHaveLength(1);
    const record = JSON.parse(readFileSync(path.join(logs, files[0]!), 'utf8'));
    expect(record.outcome).toMatchObject({ ok: true, exit_code: 0 });
    expect(record.files.list).toEqual(
      expect.arrayContaining([
        { path: 'README.md', added: 2, removed: 1 },
        { path: 'src/new.txt', added: 2, removed: 0 },
      ]),
    );
    expect(record.files).toMatchObject({ changed: 2, added: 4, removed: 1 });
    expect(record.commits).toEqual([expect.objectContaining({ subject: 'Shout two' })]);
    expect(record.tests).toEqual([expect.objectContaining({ agent: 'lead', command: 'npm test', passed: true, exit_code: 0, via: 'bash' })]);
    expect(record.commands.count).toBe(2);
    expect(record.model_calls).toBe(4);
    expect(record.cost.total_usd).toBeGreaterThan(0);
    // The fake API bills by the caching rules: after the first call, the conversation is read from the cache.
    expect(record.tokens.cache_read).toBeGreaterThan(0);
    expect(record.tokens.cache_hit_ratio).toBeGreaterThan(0.5);

    const stderr = run.stderr.trimEnd().split('\n');
    expect(stderr.slice(-4)).toEqual([
      `huddle: run record: .team/logs/${files[0]}`,
      expect.stringMatching(/^huddle: tasks: 0 done, 0 open · 2 files changed \+4 −1 · 1 commit · tests passing \(1\)$/),
      'huddle: commands: 2 · permissions: 0 asked, 0 granted, 0 denied · reviews: 0',
      expect.stringMatching(
        /^huddle: cost: \$\d+\.\d{4} \(lead \$\d+\.\d{4}\) · 4 model calls · tokens: .+ in \(\d+% cache reads, .+ written\), \d+ out · \d+\.\d s$/,
      ),
    ]);
  });
});
