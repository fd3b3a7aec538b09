// `huddle -p` end to end: the built CLI (dist/cli.js) as a subprocess, against the fake Messages
// API running in this test process. Exit codes: 0 done, 1 the run failed, 2 usage or configuration.
import { withoutRunRecord } from '../../helpers/run-record-lines.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeApi, overloaded, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { baseEnv, CLI_PATH, type CliResult, makeWorkspace, runCli, TEST_API_KEY, type Workspace } from '../../helpers/run-cli.js';

// Event types a headless run may print (docs/contract.md#events lists them all).
const EVENT_TYPES = new Set([
  'text_delta',
  'text',
  'tool_call',
  'tool_result',
  'status',
  'message_sent',
  'message_delivered',
  'task',
  'usage',
  'compaction',
  'error',
  'done',
  'retry',
  'warning',
  'prompt',
]);

interface Event {
  ts: string;
  agent: string;
  type: string;
  [field: string]: unknown;
}

let fake: FakeApi;
let ws: Workspace;

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-headless-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

/** Runs huddle in the workspace against the fake API. */
function huddle(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(args, { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url, ...env } });
}

/** Parses NDJSON strictly: every non-empty line must be one JSON object in the event shape (docs/contract.md#events). */
function parseEvents(ndjson: string): Event[] {
  const lines = ndjson.split('\n');
  expect(lines.at(-1), 'output ends with a newline').toBe('');
  return lines.slice(0, -1).map((line, i) => {
    let event: Event;
    try {
      event = JSON.parse(line) as Event;
    } catch {
      throw new Error(`line ${i + 1} is not JSON: ${line.slice(0, 200)}`);
    }
    expect(typeof event.ts, `line ${i + 1} ts`).toBe('string');
    expect(Number.isNaN(Date.parse(event.ts)), `line ${i + 1} ts is a date`).toBe(false);
    expect(typeof event.agent, `line ${i + 1} agent`).toBe('string');
    expect(EVENT_TYPES.has(event.type), `line ${i + 1} type '${event.type}'`).toBe(true);
    return event;
  });
}

/** stderr's lines before the run record (which ends every run that opened a team). */
function stderrLines(result: CliResult): string[] {
  return withoutRunRecord(result.stderr)
    .split('\n')
    .filter((line) => line !== '');
}

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((entry) => path.join(dir, entry))
    .filter((file) => statSync(file).isFile());
}

function leadLogs(): string[] {
  const dir = path.join(ws.dir, '.team', 'logs', 'lead');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^session-.+\.ndjson$/.test(name))
    .map((name) => path.join(dir, name));
}

function writeUnfinishedTeam(): void {
  const now = new Date().toISOString();
  mkdirSync(path.join(ws.dir, '.team'), { recursive: true });
  const roster = {
    team_name: 'old-team',
    lead: 'lead',
    members: [
      { name: 'lead', role: 'lead', status: 'shutdown', created_at: now, updated_at: now },
      { name: 'alice', role: 'coder', status: 'working', created_at: now, updated_at: now },
    ],
  };
  writeFileSync(path.join(ws.dir, '.team', 'config.json'), `${JSON.stringify(roster, null, 2)}\n`);
  mkdirSync(path.join(ws.dir, '.tasks'));
  writeFileSync(
    path.join(ws.dir, '.tasks', 'task_1.json'),
    JSON.stringify({
      id: 1,
      subject: 'old work',
      description: '',
      status: 'in_progress',
      owner: 'alice',
      blockedBy: [],
      blocks: [],
      created_at: now,
      updated_at: now,
    }),
  );
}

describe('huddle -p: runs', () => {
  it('prints exactly the scripted answer and exits 0', async () => {
    fake.enqueue(replyText('Hello! How can I help?'));
    const result = await huddle(['-p', 'hi']);

    // Nothing on stderr but the run record's summary, its last lines (test/runtime/record/run-record.test.ts).
    expect(withoutRunRecord(result.stderr)).toBe('');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Hello! How can I help?\n');
    expect(fake.requests).toHaveLength(1);
    expect(fake.unscripted).toHaveLength(0);
    // The prompt reached the model as the lead's user turn, with the lead's identity.
    const sent = fake.requests[0]!.body;
    expect(JSON.stringify(sent.messages)).toContain('hi');
    expect(fake.requests[0]!.agent).toBe('lead');
  });

  it('a scripted run writes, edits and runs a file through the tools', async () => {
    fake.enqueue(
      reply(text('Creating it.'), toolUse('write_file', { path: 'src/app.txt', content: 'version = 1\nname = demo\n' })),
      reply(toolUse('edit_file', { path: 'src/app.txt', old_text: 'version = 1', new_text: 'version = 2' })),
      reply(toolUse('bash', { command: 'grep version src/app.txt > out.txt && wc -l < src/app.txt >> out.txt' })),
      replyText('Done: src/app.txt is at version 2.'),
    );
    const result = await huddle(['-p', 'make the app file']);

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Done: src/app.txt is at version 2.\n');
    expect(readFileSync(path.join(ws.dir, 'src/app.txt'), 'utf8')).toBe('version = 2\nname = demo\n');
    expect(readFileSync(path.join(ws.dir, 'out.txt'), 'utf8').replace(/ /g, '')).toBe('version=2\n2\n');
    expect(fake.requests).toHaveLength(4);
    // Each request after a tool call carries its result.
    const last = fake.requests[3]!.body.messages.at(-1);
    expect(last.role).toBe('user');
    expect(last.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: expect.any(String) });
    expect(last.content[0].is_error).toBeUndefined();
  });

  it('--json: one event (docs/contract.md#events) per line, ending in `done` with usage totals; the session log matches', async () => {
    fake.enqueue(
      { kind: 'message', content: [text('Checking.'), toolUse('bash', { command: 'echo checked' })], usage: { input_tokens: 1000, output_tokens: 20 } },
      { kind: 'message', content: [text('All good.')], usage: { input_tokens: 1200, output_tokens: 7 } },
    );
    const result = await huddle(['-p', 'check', '--json']);

    expect(result.code, result.stderr).toBe(0);
    const events = parseEvents(result.stdout);
    const types = events.map((e) => e.type);
    for (const type of ['status', 'text_delta', 'text', 'tool_call', 'tool_result', 'usage', 'done']) expect(types, type).toContain(type);
    expect(types.filter((t) => t === 'done')).toHaveLength(1);

    const done = events.at(-1)!;
    expect(done).toMatchObject({ type: 'done', agent: 'lead', ok: true, exit_code: 0 });
    const usage = done.usage as Record<string, number>;
    expect(usage.input_tokens).toBe(2200);
    expect(usage.output_tokens).toBe(27);
    expect(usage.cost_usd).toBeGreaterThan(0);
    const perCall = events.filter((e) => e.type === 'usage');
    expect(perCall).toHaveLength(2);
    expect(usage.cost_usd).toBeCloseTo(
      perCall.reduce((sum, e) => sum + Number(e.cost_usd), 0),
      10,
    );

    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ name: 'bash', ok: true, content: expect.stringContaining('checked') });
    expect(events.filter((e) => e.type === 'text').map((e) => e.text)).toEqual(['Checking.', 'All good.']);

    // The same events went to .team/logs/lead/session-<iso>.ndjson, a stream's consecutive deltas joined into one line (docs/contract.md#event-log).
    const logs = leadLogs();
    expect(logs).toHaveLength(1);
    const logged = parseEvents(readFileSync(logs[0]!, 'utf8'));
    expect(logged.every((e) => e.agent === 'lead')).toBe(true);
    expect(logged.at(-1)).toMatchObject({ type: 'done', ok: true });
    const joined = events.reduce<Array<Record<string, unknown>>>((out, e) => {
      const last = out.at(-1);
      if (e.type === 'text_delta' && last?.type === 'text_delta') last.text = `${String(last.text)}${String(e.text)}`;
      else out.push({ ...e });
      return out;
    }, []);
    expect(joined.length).toBeLessThan(events.length);
    expect(logged.map((e) => [e.type, e.text])).toEqual(joined.map((e) => [e.type, e.text]));
  });

  it('two 529s then success: exit 0, with two `retry` events', async () => {
    fake.enqueue(overloaded(), overloaded(), replyText('made it'));
    const result = await huddle(['-p', 'hi', '--json']);

    expect(result.code, result.stderr).toBe(0);
    const events = parseEvents(result.stdout);
    const retries = events.filter((e) => e.type === 'retry');
    expect(retries).toHaveLength(2);
    expect(retries.map((e) => e.status)).toEqual([529, 529]);
    expect(retries.map((e) => e.attempt)).toEqual([1, 2]);
    expect(events.at(-1)).toMatchObject({ type: 'done', ok: true });
    expect(events.filter((e) => e.type === 'text').map((e) => e.text)).toEqual(['made it']);
    expect(fake.requests).toHaveLength(3);
  });

  it('without --json, retries are reported on stderr and the answer alone goes to stdout', async () => {
    fake.enqueue(overloaded(), replyText('fine'));
    const result = await huddle(['-p', 'hi']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('fine\n');
    expect(result.stderr).toMatch(/overloaded \(529\).*retrying/);
  });
});

describe('huddle -p: failures exit 1', () => {
  it('a model error after the retries: exit 1 with a one-line reason on stderr', async () => {
    fake.respond(() => ({ kind: 'status', status: 500 }));
    const result = await huddle(['-p', 'hi'], { HUDDLE_MAX_RETRIES: '1' });

    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(fake.requests).toHaveLength(2);
    const lines = stderrLines(result);
    // Retry notices come first, one per retry; then the reason, on one line.
    const reasons = lines.filter((line) => !/retrying/.test(line));
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^huddle: .*500.*after 2 attempts/);
    expect(lines.at(-1)).toBe(reasons[0]);
  });

  it('a model error with --json: exit 1 and a `done` event with ok false', async () => {
    fake.respond(() => ({ kind: 'status', status: 500 }));
    const result = await huddle(['-p', 'hi', '--json'], { HUDDLE_MAX_RETRIES: '0' });

    expect(result.code, result.stderr).toBe(1);
    const events = parseEvents(result.stdout);
    expect(events.find((e) => e.type === 'error')).toMatchObject({ fatal: true, status: 500 });
    expect(events.at(-1)).toMatchObject({ type: 'done', ok: false, exit_code: 1 });
    expect(stderrLines(result)).toHaveLength(1);
  });

  it('the turn limit: exit 1 and a reason naming it', async () => {
    fake.respond(() => reply(toolUse('bash', { command: 'echo again >> calls.txt' })));
    const result = await huddle(['-p', 'loop', '--max-turns', '2']);

    expect(result.code, result.stderr).toBe(1);
    expect(fake.requests).toHaveLength(2);
    expect(readFileSync(path.join(ws.dir, 'calls.txt'), 'utf8')).toBe('again\nagain\n');
    expect(stderrLines(result)).toEqual([expect.stringMatching(/^huddle: turn limit reached \(2 model calls\)$/)]);
  });

  it('HUDDLE_MAX_TURNS sets the turn limit too', async () => {
    fake.respond(() => reply(toolUse('bash', { command: 'true' })));
    const result = await huddle(['-p', 'loop'], { HUDDLE_MAX_TURNS: '3' });
    expect(result.code, result.stderr).toBe(1);
    expect(fake.requests).toHaveLength(3);
    expect(result.stderr).toMatch(/turn limit/);
  });
});

describe('huddle: usage and configuration errors exit 2', () => {
  it('no API key: one line naming ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, exit 2, at once', async () => {
    const result = await huddle(['-p', 'hi'], { ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: undefined, ANTHROPIC_BASE_URL: undefined });

    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    const lines = stderrLines(result);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ANTHROPIC_API_KEY/);
    expect(lines[0]).toMatch(/ANTHROPIC_BASE_URL/);
    expect(fake.requests).toHaveLength(0);
    expect(existsSync(path.join(ws.dir, '.team'))).toBe(false);
  });

  it('an empty ANTHROPIC_API_KEY counts as no key', async () => {
    const result = await huddle(['-p', 'hi', '--json'], { ANTHROPIC_API_KEY: '' });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/ANTHROPIC_API_KEY/);
    expect(fake.requests).toHaveLength(0);
  });

  it('ANTHROPIC_AUTH_TOKEN is accepted instead of a key', async () => {
    fake.enqueue(replyText('token ok'));
    const result = await huddle(['-p', 'hi'], { ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: 'tok-test-abcdefghijkl' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('token ok\n');
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer tok-test-abcdefghijkl');
  });

  it('an unknown flag', async () => {
    const result = await huddle(['-p', 'hi', '--no-such-flag']);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/no-such-flag/);
    expect(result.stdout).toBe('');
    expect(fake.requests).toHaveLength(0);
  });

  it('--json without -p', async () => {
    const result = await huddle(['--json']);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/-p/);
    expect(fake.requests).toHaveLength(0);
  });

  it('a bad --max-turns and a bad HUDDLE_MAX_RETRIES', async () => {
    const flag = await huddle(['-p', 'hi', '--max-turns', 'lots']);
    expect(flag.code, flag.stderr).toBe(2);
    expect(flag.stderr).toMatch(/--max-turns/);
    const env = await huddle(['-p', 'hi'], { HUDDLE_MAX_RETRIES: '-1' });
    expect(env.code, env.stderr).toBe(2);
    expect(env.stderr).toMatch(/HUDDLE_MAX_RETRIES/);
    expect(fake.requests).toHaveLength(0);
  });

  it('an unfinished team without --resume or --fresh: exit 2 naming both, nothing touched', async () => {
    writeUnfinishedTeam();
    const before = readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8');
    const result = await huddle(['-p', 'hi']);

    expect(result.code, result.stderr).toBe(2);
    const lines = stderrLines(result);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/--resume/);
    expect(lines[0]).toMatch(/--fresh/);
    expect(lines[0]).toMatch(/alice/);
    expect(fake.requests).toHaveLength(0);
    expect(readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8')).toBe(before);
    expect(existsSync(path.join(ws.dir, '.team', 'archive'))).toBe(false);
  });
});

describe('huddle -p --fresh', () => {
  it('archives the unfinished team under .team/archive/<stamp>/ and runs', async () => {
    writeUnfinishedTeam();
    const oldRoster = readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8');
    fake.enqueue(replyText('fresh start'));
    const result = await huddle(['-p', 'hi', '--fresh']);

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('fresh start\n');
    const archiveDir = path.join(ws.dir, '.team', 'archive');
    const stamps = readdirSync(archiveDir);
    expect(stamps).toHaveLength(1);
    expect(stamps[0]).toMatch(/^\d{4}-\d{2}-\d{2}T[\d-]+Z$/);
    const archived = path.join(archiveDir, stamps[0]!);
    expect(readFileSync(path.join(archived, 'config.json'), 'utf8')).toBe(oldRoster);
    expect(JSON.parse(readFileSync(path.join(archived, 'tasks', 'task_1.json'), 'utf8'))).toMatchObject({ id: 1, owner: 'alice' });
    expect(existsSync(path.join(ws.dir, '.tasks', 'task_1.json'))).toBe(false);

    // The new roster is the new team's: alice is gone, the lead has finished.
    const roster = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8')) as { members: Array<{ name: string; status: string }> };
    expect(roster.members.map((m) => m.name)).toEqual(['lead']);
    expect(roster.members[0]!.status).toBe('shutdown');
    expect(result.stderr).toMatch(/archived/);

    // The next run needs neither flag: the team left behind is finished.
    fake.enqueue(replyText('again'));
    const next = await huddle(['-p', 'hi']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe('again\n');
  });
});

describe('huddle -p: the API key stays secret', () => {
  it('never appears in stdout, stderr or any file under .team/', async () => {
    fake.enqueue(
      // A command that tries to read the key from the environment.
      reply(toolUse('bash', { command: 'env; echo "key=[$ANTHROPIC_API_KEY]"' })),
      // A response that (as a hostile or buggy server might) echoes the key back.
      reply(text(`The key is ${TEST_API_KEY}.`), toolUse('write_file', { path: 'note.txt', content: 'no secrets here' })),
      { kind: 'status', status: 401 },
    );
    const result = await huddle(['-p', 'show me the key', '--json'], { HUDDLE_MAX_RETRIES: '2' });

    expect(result.code, result.stderr).toBe(1);
    const events = parseEvents(result.stdout);
    // The checks below are not vacuous: the key reached the server, the command ran, the echo was streamed.
    expect(fake.requests.map((r) => r.headers.authorization ?? r.headers['x-api-key'])).toContain(`Bearer ${TEST_API_KEY}`);
    const bash = events.find((e) => e.type === 'tool_result' && e.name === 'bash');
    expect(bash?.content).toMatch(/key=\[\]/);
    expect(events.some((e) => e.type === 'text' && String(e.text).includes('[redacted]'))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'done', ok: false });
    expect(result.stderr).toMatch(/401/);

    expect(result.stdout).not.toContain(TEST_API_KEY);
    expect(result.stderr).not.toContain(TEST_API_KEY);
    const files = filesUnder(path.join(ws.dir, '.team'));
    expect(files.some((f) => f.endsWith('.ndjson'))).toBe(true);
    for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toContain(TEST_API_KEY);
  });

  it('is redacted from the plain output and the failure reason, even when the server echoes it', async () => {
    fake.enqueue(replyText(`Your key: ${TEST_API_KEY}`));
    const ok = await huddle(['-p', 'hi']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('Your key: [redacted]\n');

    const echo = (status: number) => ({
      kind: 'status' as const,
      status,
      body: { type: 'error', error: { type: 'api_error', message: `bad credentials: ${TEST_API_KEY}` } },
    });
    fake.enqueue(echo(500), echo(500));
    const failed = await huddle(['-p', 'hi'], { HUDDLE_MAX_RETRIES: '1' });
    expect(failed.code, failed.stderr).toBe(1);
    // One retry notice and the final reason, both with the server's message, both redacted.
    expect(stderrLines(failed), failed.stderr).toHaveLength(2);
    expect(failed.stderr.match(/bad credentials: \[redacted\]/g)).toHaveLength(2);
    expect(failed.stderr).not.toContain(TEST_API_KEY);
    for (const file of filesUnder(path.join(ws.dir, '.team'))) expect(readFileSync(file, 'utf8'), file).not.toContain(TEST_API_KEY);
  });
});

describe('huddle -p: a run that cannot go on', () => {
  it('a stall (the watchdog interrupts a silent agent) ends the run: exit 1 and why, on stderr', async () => {
    fake.respond(() => ({ kind: 'hang' }));
    const result = await huddle(['-p', 'hi'], { HUDDLE_STALL_MS: '300' });

    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^huddle: lead stalled: no event for \d+ ms while working; it was interrupted and the run failed/m);
    // The run is over, not left unfinished: the next run needs no --resume.
    const roster = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8')) as { members: Array<{ name: string; status: string }> };
    expect(roster.members).toEqual([expect.objectContaining({ name: 'lead', status: 'shutdown' })]);
  });

  it('Ctrl+C says so, leaves the team resumable (nobody shut down), says how to go on; --resume continues it', async () => {
    fake.respond((request) => {
      if (request.agent === 'lead' && request.body.messages.length === 1) {
        return reply(toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Write the notes.' }));
      }
      return { kind: 'hang' }; // the lead's next call and alice's first: in flight when Ctrl+C comes
    });
    const child = spawn(process.execPath, [CLI_PATH, '-p', 'start the notes'], {
      cwd: ws.dir,
      env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    await fake.waitForRequests(3, 15_000);
    child.kill('SIGINT');
    const code = await closed;

    expect(code, stderr).toBe(130);
    expect(stderr).toMatch(/^huddle: interrupted; the team is left as it was in this workspace\. Continue it with: huddle -p "start the notes" --resume/m);
    const roster = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8')) as { members: Array<{ name: string; status: string }> };
    expect(roster.members.map((m) => m.name).sort()).toEqual(['alice', 'lead']);
    for (const member of roster.members) expect(member.status, member.name).not.toBe('shutdown');

    // The team comes back: the lead with its conversation, alice with hers.
    fake.respond((request) =>
      request.agent === 'lead' ? replyText('Resumed: the notes are under way.') : request.agent === 'alice' ? replyText('Back at the notes.') : undefined,
    );
    const resumed = await huddle(['-p', 'carry on', '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/^huddle: resumed lead, alice$/m);
    expect(resumed.stdout).toBe('Resumed: the notes are under way.\n');
  });
});
