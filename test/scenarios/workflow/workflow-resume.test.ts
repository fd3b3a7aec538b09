// `huddle workflow run FILE` (docs/workflows.md), headless on the fake Messages API: three phases (20 agents fanned
// out at most 5 at once, a reduce step that gets their results, a gate the person answers with `huddle approve`).
// The first run is killed (SIGKILL) once some of the fan-out is done; the second run finishes it, and no
// agent whose step was completed before the kill makes a single request again: its result is reused from the board.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import pg from 'pg';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { baseEnv, CLI_PATH, makeWorkspace, type Workspace } from '../../helpers/run-cli.js';

const STEPS = 20;
const CAP = 5;

const WORKFLOW = `
type Result = { step: string; result: string };
export default {
  name: 'survey',
  phases: [
    {
      name: 'read',
      concurrency: ${CAP},
      steps: Array.from({ length: ${STEPS} }, (_, i) => ({ name: \`part-\${i + 1}\`, prompt: \`Read part \${i + 1}.\` })),
    },
    {
      name: 'reduce',
      steps: (previous: Result[]) => [{ name: 'summary', role: 'writer', prompt: \`Combine:\\n\${previous.map((r) => \`\${r.step}: \${r.result}\`).join('\\n')}\` }],
    },
    { name: 'ship', gate: { person: 'Publish the summary?' } },
  ],
};
`;

let fake: FakeApi;
let ws: Workspace;
const children: ChildProcess[] = [];

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-workflow-');
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await fake.close();
  ws.cleanup();
});

/** Each step's agent completes the task its spawn prompt names, with a result saying which step it was; then ends. */
function scriptAgents(): void {
  fake.respond((request) => {
    const agent = request.agent ?? '';
    if (!/^(read|reduce)-/.test(agent)) return undefined;
    const history = JSON.stringify(request.body?.messages ?? []);
    if (history.includes('tool_result')) return replyText('Done.');
    const task = /Task #(\d+) is yours/.exec(history)?.[1];
    // A fan-out step takes a moment, so the run is killed with some steps done and some under way.
    const answer = reply(toolUse('task_update', { task_id: Number(task), status: 'completed', result: `${agent} read` }));
    return agent.startsWith('read-') ? { ...answer, delayMs: 40 } : answer;
  });
}

function startFile(file: string): ReturnType<typeof start> {
  return start([], {}, file);
}

function start(
  args: string[],
  extraEnv: Record<string, string> = {},
  file = 'survey.workflow.ts',
): { child: ChildProcess; done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [CLI_PATH, 'workflow', 'run', file, ...args], {
    cwd: ws.dir,
    env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

interface BoardTask {
  id: number;
  status: string;
  owner: string | null;
  result?: string;
  workflow?: { name: string; phase: string; step: string };
}

/** The board as the files say (a task being written is read on the next look). */
async function fileBoard(): Promise<BoardTask[]> {
  const dir = path.join(ws.dir, '.tasks');
  let files: string[];
  try {
    files = readdirSync(dir).filter((file) => /^task_\d+\.json$/.test(file));
  } catch {
    return [];
  }
  return files.flatMap((file) => {
    try {
      return [JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as BoardTask];
    } catch {
      return [];
    }
  });
}

function requestsOf(agent: string, requests: RecordedRequest[]): number {
  return requests.filter((r) => r.agent === agent).length;
}

/**
 * Runs the survey workflow, kills it (SIGKILL) once 7 of its 20 fan-out steps are done, runs it again, approves its
 * gate, and checks that no step completed before the kill was worked on again. `board` reads the team's board.
 */
async function killAndResume(args: string[], board: () => Promise<BoardTask[]>, env: Record<string, string> = {}): Promise<void> {
  {
    writeFileSync(path.join(ws.dir, 'survey.workflow.ts'), WORKFLOW);
    scriptAgents();

    // Run 1: killed once 7 of the 20 are done. Meanwhile never more than 5 steps under way.
    const first = start(args, env);
    let mostAtOnce = 0;
    let completedAtKill: BoardTask[] = [];
    for (;;) {
      const read = (await board()).filter((task) => task.workflow?.phase === 'read');
      mostAtOnce = Math.max(mostAtOnce, read.filter((task) => task.status === 'in_progress').length);
      const completed = read.filter((task) => task.status === 'completed');
      if (completed.length >= 7) {
        first.child.kill('SIGKILL');
        break;
      }
      if (first.child.exitCode !== null) throw new Error(`the first run ended on its own: ${(await first.done).stderr}`);
      await sleep(20);
    }
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    // What was done when it died (read after the death: a completion written in the last instant counts too).
    completedAtKill = (await board()).filter((task) => task.workflow?.phase === 'read' && task.status === 'completed');
    expect(completedAtKill.length).toBeGreaterThanOrEqual(7);
    expect(completedAtKill.length).toBeLessThan(STEPS);
    expect(mostAtOnce).toBeLessThanOrEqual(CAP);
    const requestsBefore = fake.requests.length;

    // Run 2: goes on, stops at the gate until the person approves from a shell.
    const second = start(args, env);
    for (;;) {
      const approve = spawnSync(process.execPath, [CLI_PATH, 'approve'], { cwd: ws.dir, env: baseEnv(), encoding: 'utf8' });
      if (approve.status === 0) {
        expect(approve.stdout).toContain('approved: Publish the summary?');
        break;
      }
      if (second.child.exitCode !== null) throw new Error(`the second run ended before its gate: ${(await second.done).stderr}`);
      await sleep(100);
    }
    const finished = await second.done;
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stderr).toContain(`${completedAtKill.length} done in an earlier run (reused)`);

    const after = fake.requests.slice(requestsBefore);
    // No finished step's agent worked again.
    for (const task of completedAtKill) expect(requestsOf(`read-${task.workflow!.step}`, after), task.workflow!.step).toBe(0);
    // Every step completed exactly once, by its own agent, with its result; the reduce step got all twenty.
    const read = (await board()).filter((task) => task.workflow?.phase === 'read');
    expect(read).toHaveLength(STEPS);
    for (const task of read) {
      expect(task.status).toBe('completed');
      expect(task.owner).toBe(`read-${task.workflow!.step}`);
      expect(task.result).toBe(`read-${task.workflow!.step} read`);
    }
    const completions = fake.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes('tool_result'));
    for (let i = 1; i <= STEPS; i++) expect(completions.filter((r) => r.agent === `read-part-${i}`).length, `part-${i}`).toBeLessThanOrEqual(2);
    const reduce = fake.requests.find((r) => r.agent === 'reduce-summary')!;
    for (let i = 1; i <= STEPS; i++) expect(JSON.stringify(reduce.body.messages)).toContain(`part-${i}: read-part-${i} read`);

    const output = JSON.parse(finished.stdout.trim()) as { workflow: string; phases: Record<string, Array<{ step: string; result: string }>> };
    expect(output.workflow).toBe('survey');
    expect(output.phases.read).toHaveLength(STEPS);
    expect(output.phases.reduce).toEqual([expect.objectContaining({ step: 'summary', result: 'reduce-summary read' })]);
    expect((await board()).find((task) => task.workflow?.phase === 'ship')).toMatchObject({ status: 'completed', result: 'approved' });
    expect(fake.unscripted).toEqual([]);
  }
}

describe('huddle workflow run', () => {
  it('killed in the middle of a fan-out and run again, finishes without doing any finished step twice', async () => {
    await killAndResume([], fileBoard);
  }, 240_000);

  it('a denied gate stops the run (exit 1) and is asked again on the next run; a budget gate over its limit exits 3', async () => {
    writeFileSync(
      path.join(ws.dir, 'gated.mjs'),
      "export default { name: 'gated', phases: [{ name: 'read', steps: [{ name: 'one', prompt: 'Read.' }] }, { name: 'ship', gate: { person: 'Ship it?' } }] };\n",
    );
    scriptAgents();
    const answer = async (run: ReturnType<typeof start>, deny: boolean) => {
      for (;;) {
        const list = spawnSync(process.execPath, [CLI_PATH, 'approve', '--list', '--json'], { cwd: ws.dir, env: baseEnv(), encoding: 'utf8' });
        const waiting = list.status === 0 ? (JSON.parse(list.stdout) as Array<{ id: string; summary: string }>) : [];
        if (waiting.length === 1) {
          expect(waiting[0]!.summary).toBe('Ship it?');
          const args = deny ? ['approve', waiting[0]!.id, '--deny'] : ['approve', waiting[0]!.id];
          const answered = spawnSync(process.execPath, [CLI_PATH, ...args], { cwd: ws.dir, env: baseEnv(), encoding: 'utf8' });
          expect(answered.status, answered.stderr).toBe(0);
          return;
        }
        if (run.child.exitCode !== null) throw new Error(`the run ended before its gate: ${(await run.done).stderr}`);
        await sleep(100);
      }
    };
    const first = startFile('gated.mjs');
    await answer(first, true);
    const denied = await first.done;
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('gate ship: not approved; run it again to go on where it stopped');
    const stepRequests = requestsOf('read-one', fake.requests);

    const second = startFile('gated.mjs');
    await answer(second, false);
    const approved = await second.done;
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stderr).toContain('1 done in an earlier run (reused)');
    expect(requestsOf('read-one', fake.requests)).toBe(stepRequests);

    writeFileSync(
      path.join(ws.dir, 'costly.mjs'),
      "export default { name: 'costly', phases: [{ name: 'read', steps: [{ name: 'two', prompt: 'Read.' }] }, { name: 'cap', gate: { budgetUsd: 0.0000001 } }] };\n",
    );
    const costly = await startFile('costly.mjs').done;
    expect(costly.code, costly.stderr).toBe(3);
    expect(costly.stderr).toMatch(/gate cap: the workflow spent \$\d+\.\d{4} \(this run and earlier ones\), over the gate's \$1e-7/);
  }, 120_000);

  it("a budget gate counts what the workflow's earlier runs spent, a killed one too (the team's spend ledger)", async () => {
    // Each step's completing call costs a million input tokens; its last word almost nothing. Run 1 is killed while
    // step two works, after step one (its spend in the ledger); run 2 spends on step two only, under the gate's
    // budget, but the two steps together are over it: the gate stops the run.
    const metered = (budgetUsd: number) =>
      `export default { name: 'metered', phases: [{ name: 'read', concurrency: 1, steps: [{ name: 'one', prompt: 'Read.' }, { name: 'two', prompt: 'Read.' }] }, { name: 'cap', gate: { budgetUsd: ${budgetUsd} } }] };\n`;
    writeFileSync(path.join(ws.dir, 'metered.mjs'), metered(1_000_000));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let twoAsked = false;
    fake.respond(async (request) => {
      const agent = request.agent ?? '';
      const history = JSON.stringify(request.body?.messages ?? []);
      if (history.includes('tool_result')) return { ...replyText('Done.'), usage: { input_tokens: 1, output_tokens: 1 } };
      if (agent === 'read-two' && !twoAsked) {
        twoAsked = true;
        await released;
      }
      const task = /Task #(\d+) is yours/.exec(history)?.[1];
      return {
        ...reply(toolUse('task_update', { task_id: Number(task), status: 'completed', result: 'read' })),
        usage: { input_tokens: 1_000_000, output_tokens: 1 },
      };
    });
    const ledger = () => {
      const spent: Record<string, number> = {};
      for (const line of readFileSync(path.join(ws.dir, '.team', 'spend.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)) {
        const usage = JSON.parse(line) as { agent: string; cost: number };
        spent[usage.agent] = (spent[usage.agent] ?? 0) + usage.cost;
      }
      return spent;
    };

    const first = startFile('metered.mjs');
    while (!twoAsked) {
      if (first.child.exitCode !== null) throw new Error(`the first run ended on its own: ${(await first.done).stderr}`);
      await sleep(20);
    }
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    release();
    const stepOne = ledger()['read-one']!;
    expect(stepOne).toBeGreaterThan(0);

    // Over what one step costs, under what two do.
    writeFileSync(path.join(ws.dir, 'metered.mjs'), metered(Number((stepOne * 1.5).toFixed(6))));
    const second = await startFile('metered.mjs').done;
    expect(second.code, second.stderr).toBe(3);
    expect(second.stderr).toContain('1 done in an earlier run (reused)');
    const spent = ledger();
    const both = spent['read-one']! + spent['read-two']!;
    expect(both).toBeGreaterThan(stepOne * 1.5);
    expect(spent['read-two']!).toBeLessThan(stepOne * 1.5);
    expect(second.stderr).toContain(`gate cap: the workflow spent $${both.toFixed(4)} (this run and earlier ones)`);
  }, 120_000);

  it('says in one line what is wrong with a module that is no workflow, and exits 2', async () => {
    writeFileSync(path.join(ws.dir, 'broken.mjs'), "export default { name: 'Survey', phases: [] };\n");
    const run = spawnSync(process.execPath, [CLI_PATH, 'workflow', 'run', 'broken.mjs'], {
      cwd: ws.dir,
      env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url },
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe("huddle: broken.mjs: not a workflow: name: workflow names use lowercase letters, digits, '-' or '_', starting with a letter\n");
    const missing = spawnSync(process.execPath, [CLI_PATH, 'workflow', 'run', 'nowhere.ts'], { cwd: ws.dir, env: baseEnv(), encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(missing.stderr).toBe(`huddle: nowhere.ts: no such file (looked for ${path.join(ws.dir, 'nowhere.ts')})\n`);
    expect(fake.requests).toEqual([]);
  });
});

describePostgres('huddle workflow run on PostgreSQL', (base) => {
  it('killed in the middle of a fan-out and run again, finishes from the database without doing any finished step twice', async () => {
    const { url, team } = teamUrl(base, 'workflow');
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      // On a fresh server the tables appear with the first run's migration: until then the board is empty.
      const board = async () => {
        const exists = await client.query<{ found: string | null }>(`SELECT to_regclass('huddle_tasks') AS found`);
        if (!exists.rows[0]?.found) return [];
        return (await client.query<{ data: BoardTask }>('SELECT data FROM huddle_tasks WHERE team = $1', [team])).rows.map((row) => row.data);
      };
      // A killed lead's hold on the team lapses after the lease: short, so the second run need not wait long.
      await killAndResume(['--team', url], board, { HUDDLE_LEASE_MS: '2000' });
    } finally {
      await client.end();
    }
  }, 240_000);
});
