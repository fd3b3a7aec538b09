// A whole team on PostgreSQL, scripted through the fake Messages API, for the multi-host tests:
// the lead creates the tasks and spawns the teammates in its first response; a teammate answers
// an auto-claimed task by completing it and reporting to the lead, then ends its turn (and, idle,
// claims the next). Workers are real `huddle worker` processes; the lead a real `huddle -p`.
import { type ChildProcess, spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { type FakeApi, type RecordedRequest, reply, replyText, type Scripted, toolUse } from '../../helpers/fake-api.js';
import { baseEnv, CLI_PATH } from '../../helpers/run-cli.js';

export interface Scenario {
  tasks: number;
  teammates: string[];
  /** Milliseconds between the events of a teammate's streamed response (slower work). */
  delayMs?: number;
}

/** The text of the last user turn of a request (its text blocks), and whether it carries tool results. */
function lastTurn(request: RecordedRequest): { text: string; toolResults: boolean } {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (!last) return { text: '', toolResults: false };
  if (typeof last.content === 'string') return { text: last.content, toolResults: false };
  const blocks = Array.isArray(last.content) ? (last.content as Array<{ type: string; text?: string }>) : [];
  return {
    text: blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '')
      .join('\n'),
    toolResults: blocks.some((b) => b.type === 'tool_result'),
  };
}

/** Scripts the whole team on `fake`. */
export function scriptTeam(fake: FakeApi, scenario: Scenario): void {
  const slow = (scripted: Scripted): Scripted => (scenario.delayMs && scripted.kind === 'message' ? { ...scripted, delayMs: scenario.delayMs } : scripted);
  fake.respond((request): Scripted | undefined => {
    const agent = request.agent;
    const { text, toolResults } = lastTurn(request);
    if (agent === 'lead') {
      const messages = (request.body?.messages ?? []) as unknown[];
      if (messages.length === 1) {
        return reply(
          ...Array.from({ length: scenario.tasks }, (_, i) => toolUse('task_create', { subject: `Task ${i + 1}`, description: `part ${i + 1} of the work` })),
          ...scenario.teammates.map((name) =>
            toolUse('spawn_teammate', { name, role: 'coder', prompt: 'Take tasks from the board; report each one to the lead.' }),
          ),
        );
      }
      return replyText(toolResults ? 'The work is handed out.' : 'Noted.');
    }
    if (!agent) return undefined;
    const claimed = /<auto-claimed>Task #(\d+):/.exec(text);
    if (claimed && !toolResults) {
      const id = Number(claimed[1]);
      return slow(
        reply(toolUse('task_update', { task_id: id, status: 'completed' }), toolUse('send_message', { to: 'lead', content: `report #${id} from ${agent}` })),
      );
    }
    return slow(replyText(toolResults ? 'Done; looking for the next task.' : 'Ready.'));
  });
}

/** Three checkouts of one repository: the lead's and one per worker. */
export function makeCheckouts(root: string, names: string[]): Record<string, string> {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, {
      cwd,
      stdio: 'ignore',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
  const origin = path.join(root, 'origin');
  mkdirSync(origin, { recursive: true });
  git(origin, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(origin, 'README.md'), '# the project\n');
  git(origin, 'add', '.');
  git(origin, 'commit', '-q', '-m', 'start');
  const out: Record<string, string> = {};
  for (const name of names) {
    const dir = path.join(root, name);
    git(root, 'clone', '-q', origin, dir);
    out[name] = dir;
  }
  return out;
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves with the host id once it serves the team. */
  ready: Promise<string>;
  stderr(): string;
  /** Resolves when its stderr has a line matching `pattern`. */
  waitFor(pattern: RegExp): Promise<string>;
  exited: Promise<number | null>;
}

/** Starts `huddle worker`; `prefix` runs it through another program (ip netns exec …). */
export function startWorker(options: { cwd: string; team: string; slots: number; env: Record<string, string>; prefix?: string[] }): WorkerProcess {
  const command = [
    ...(options.prefix ?? []),
    process.execPath,
    CLI_PATH,
    'worker',
    '--team',
    options.team,
    '--cwd',
    options.cwd,
    '--slots',
    String(options.slots),
  ];
  const child = spawn(command[0]!, command.slice(1), { env: { ...baseEnv(), ...options.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  const check = () => {
    for (const waiter of [...waiters]) {
      const found = stderr.split('\n').find((line) => waiter.pattern.test(line));
      if (found !== undefined) {
        waiters.delete(waiter);
        waiter.resolve(found);
      }
    }
  };
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    check();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      waiters.add({ pattern, resolve });
      check();
      void exited.then((code) => reject(new Error(`the worker exited (${code}) before saying ${pattern}:\n${stderr}`)));
    });
  const ready = waitFor(/serving team .* as host (\S+):/).then((line) => /as host (\S+):/.exec(line)![1]!);
  return { child, ready, stderr: () => stderr, waitFor, exited };
}

export interface TeamRecord {
  tasks: Array<{ id: number; status: string; owner: string | null }>;
  members: Array<{ name: string; status: string; host?: string; error?: string }>;
  /** task id → how many `completed` task events (from any host). */
  completions: Map<number, number>;
  /** The lead's inbox: every message, and how many times each id was delivered to its model. */
  leadInbox: Array<{ id: string; from: string; content: string }>;
  deliveries: Map<string, number>;
}

/** Reads what the team did from the database. */
export async function readTeam(connectionString: string, team: string): Promise<TeamRecord> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const tasks = (
      await client.query<{ data: { id: number; status: string; owner: string | null } }>('SELECT data FROM huddle_tasks WHERE team = $1 ORDER BY id', [team])
    ).rows.map((r) => r.data);
    const members = (
      await client.query<{ data: TeamRecord['members'][number] }>('SELECT data FROM huddle_members WHERE team = $1 ORDER BY position', [team])
    ).rows.map((r) => r.data);
    const completions = new Map<number, number>();
    const done = await client.query<{ id: string }>(
      `SELECT body->'task'->>'id' AS id FROM huddle_events WHERE team = $1 AND body->>'type' = 'task' AND body->>'action' = 'completed'`,
      [team],
    );
    for (const { id } of done.rows) completions.set(Number(id), (completions.get(Number(id)) ?? 0) + 1);
    const leadInbox = (
      await client.query<{ body: { id: string; from: string; content: string } }>(
        `SELECT body FROM huddle_messages WHERE team = $1 AND recipient = 'lead' ORDER BY seq`,
        [team],
      )
    ).rows.map((r) => r.body);
    const deliveries = new Map<string, number>();
    const delivered = await client.query<{ ids: string[] }>(
      `SELECT ARRAY(SELECT jsonb_array_elements_text(body->'ids')) AS ids FROM huddle_events WHERE team = $1 AND agent = 'lead' AND body->>'type' = 'message_delivered'`,
      [team],
    );
    for (const { ids } of delivered.rows) for (const id of ids) deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
    return { tasks, members, completions, leadInbox, deliveries };
  } finally {
    await client.end();
  }
}

/** The environment of every huddle process of a scenario. */
export function scenarioEnv(apiUrl: string): Record<string, string> {
  return { ANTHROPIC_BASE_URL: apiUrl, HUDDLE_SANDBOX: 'off', HUDDLE_STALL_MS: '0' };
}
