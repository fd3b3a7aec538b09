// The team runtime end to end (issue "Team runtime"): the lead plans three tasks (#2 blocked by
// #1), spawns alice and bob, they auto-claim, write files, complete and report, the lead shuts
// them down. Once through the built CLI (`huddle -p` as a subprocess against the fake API), once
// in-process with Team; then the workspace on disk is checked.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../../src/runtime/store/board.js';
import type { EventRecord as HuddleEvent } from '../../../src/runtime/events/events.js';
import type { RosterConfig } from '../../../src/runtime/store/roster.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.ts';
import {
  allUserTexts,
  inboxMessages,
  installScenario,
  lastUserTexts,
  messageKey,
  openTeamHarness,
  readEventLogs,
  readInboxFile,
  SCENARIO_FINAL,
  SCENARIO_PROMPT,
  SCENARIO_TASKS,
  TEST_API_KEY,
  type ScenarioLog,
  type TeamHarness,
} from '../../helpers/team-harness.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const cli = path.join(repo, 'dist', 'cli.js');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(async () => {
  // `npm test` builds first; a bare `vitest run` on a fresh checkout builds here.
  if (!existsSync(cli)) {
    const { execFileSync } = await import('node:child_process');
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: repo, stdio: 'inherit' });
  }
});

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runCli(args: string[], cwd: string, env: Record<string, string>, timeoutMs = 20_000): Promise<CliRun> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('ANTHROPIC_') && !key.startsWith('HUDDLE_')));
  const started = performance.now();
  const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`huddle -p did not exit within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr, ms: Math.round(performance.now() - started) });
    });
  });
}

function readTasks(root: string): Task[] {
  const dir = path.join(root, '.tasks');
  return readdirSync(dir)
    .filter((name) => /^task_\d+\.json$/.test(name))
    .map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as Task)
    .sort((a, b) => a.id - b.id);
}

/** Everything the finished scenario must have left in the workspace. */
function checkWorkspace(root: string, fake: FakeApi, log: ScenarioLog, events: HuddleEvent[]): void {
  // The board: three tasks, all completed, each owned by the teammate that worked it, nothing blocked.
  const tasks = readTasks(root);
  expect(tasks.map((t) => [t.id, t.subject, t.status])).toEqual([
    [1, SCENARIO_TASKS[0], 'completed'],
    [2, SCENARIO_TASKS[1], 'completed'],
    [3, SCENARIO_TASKS[2], 'completed'],
  ]);
  for (const task of tasks) {
    expect(['alice', 'bob']).toContain(task.owner);
    expect(task.owner).toBe(log.workedBy.get(task.id));
    expect(task.blockedBy).toEqual([]);
  }
  expect(tasks[0]!.blocks).toEqual([2]);

  // The written files, each by the task's owner.
  for (const task of tasks) {
    expect(readFileSync(path.join(root, 'out', `task-${task.id}.txt`), 'utf8')).toBe(`task ${task.id} by ${task.owner}\n`);
  }

  // The roster: lead, alice and bob, all shut down.
  const roster = JSON.parse(readFileSync(path.join(root, '.team', 'config.json'), 'utf8')) as RosterConfig;
  expect(roster.lead).toBe('lead');
  expect(Object.fromEntries(roster.members.map((m) => [m.name, m.status]))).toEqual({ lead: 'shutdown', alice: 'shutdown', bob: 'shutdown' });
  expect(roster.members.find((m) => m.name === 'alice')?.status_reason).toBe('shutdown approved');

  // The lead's inbox: three reports and two approving shutdown_responses, each message once.
  const inbox = readInboxFile(path.join(root, '.team', 'inbox', 'lead.jsonl'));
  expect(new Set(inbox.map((m) => m.id)).size).toBe(inbox.length);
  const reports = inbox.filter((m) => m.type === 'message' && /^Task #\d+ done by/.test(m.content));
  expect(reports.map((m) => Number(/#(\d+)/.exec(m.content)![1])).sort()).toEqual([1, 2, 3]);
  for (const report of reports) expect(report.from).toBe(log.workedBy.get(Number(/#(\d+)/.exec(report.content)![1])));
  const responses = inbox.filter((m) => m.type === 'shutdown_response');
  expect(responses.map((m) => m.from).sort()).toEqual(['alice', 'bob']);
  for (const response of responses) {
    expect(response.approve).toBe(true);
    expect(response.request_id).toBe(log.approved.get(response.from));
  }
  expect(inbox).toHaveLength(5);
  // Each teammate got exactly one shutdown_request, carrying the id it answered with.
  for (const name of ['alice', 'bob']) {
    const requests = readInboxFile(path.join(root, '.team', 'inbox', `${name}.jsonl`)).filter((m) => m.type === 'shutdown_request');
    expect(requests.map((m) => m.request_id)).toEqual([log.approved.get(name)]);
  }

  // Every message reached the lead's model exactly once.
  const delivered = events.filter((e) => e.agent === 'lead' && e.type === 'message_delivered').flatMap((e) => e.ids as string[]);
  expect([...delivered].sort()).toEqual(inbox.map((m) => m.id).sort());
  const leadRequests = fake.requests.filter((r) => r.agent === 'lead');
  const shown = inboxMessages(allUserTexts(leadRequests.at(-1)!)).map(messageKey);
  expect(shown.sort()).toEqual(inbox.map(messageKey).sort());

  // The blocked task was claimed only after its blocker was completed: in the event logs...
  const taskEvents = events.filter((e) => e.type === 'task');
  const completed1 = taskEvents.findIndex((e) => e.action === 'completed' && (e.task as Task).id === 1);
  const claimed2 = taskEvents.findIndex((e) => e.action === 'claimed' && (e.task as Task).id === 2);
  expect(completed1).toBeGreaterThanOrEqual(0);
  expect(claimed2).toBeGreaterThan(completed1);
  expect(Date.parse(taskEvents[claimed2]!.ts)).toBeGreaterThanOrEqual(Date.parse(taskEvents[completed1]!.ts));
  // ...every earlier event of task 2 shows it pending, unowned and blocked by #1 until the unblock...
  for (const event of taskEvents.slice(0, claimed2)) {
    const task = event.task as Task;
    if (task.id !== 2) continue;
    expect(task.status).toBe('pending');
    expect(task.owner).toBeNull();
  }
  const unblocked = taskEvents.findIndex((e) => (e.task as Task).id === 2 && (e.task as Task).blockedBy.length === 0);
  expect(unblocked).toBeGreaterThan(completed1);
  // ...and at the fake server: no auto-claim of #2 reached a model before #1's completion was sent.
  expect(log.autoClaimSeen.get(2)).toBeGreaterThan(log.completionAnswered.get(1)!);
}

/** Events of the event logs in a consistent order: by timestamp, stable within one agent's file. */
function orderedLogEvents(root: string): HuddleEvent[] {
  return readEventLogs(root)
    .map((event, index) => ({ event, index }))
    .sort((a, b) => Date.parse(a.event.ts) - Date.parse(b.event.ts) || a.index - b.index)
    .map(({ event }) => event);
}

describe('team runtime end to end', () => {
  it('huddle -p: the lead plans, two teammates auto-claim, work, report and shut down; exit 0', async () => {
    const fake = await startFakeApi();
    cleanups.push(() => fake.close());
    const root = mkdtempSync(path.join(tmpdir(), 'huddle-e2e-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const log = installScenario(fake);

    const run = await runCli(['-p', SCENARIO_PROMPT], root, {
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      HUDDLE_IDLE_TIMEOUT_MS: '20000',
      HUDDLE_MAX_RETRIES: '2',
      HUDDLE_RETRY_BASE_MS: '10',
    });
    console.log(`huddle -p end-to-end run: ${run.ms} ms, ${fake.requests.length} model requests`);

    expect(run.stderr).not.toMatch(/warning|failed|error/i);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${SCENARIO_FINAL}\n`);
    expect(fake.unscripted).toEqual([]);
    // The key from ANTHROPIC_API_KEY reached the server (as the SDK sends it) on every request.
    for (const request of fake.requests) expect(JSON.stringify(request.headers)).toContain(TEST_API_KEY);

    // Every agent wrote its own event log, and none of them holds the key.
    // A log directory per agent, and the run's record beside them (runtime/record).
    const logEntries = readdirSync(path.join(root, '.team', 'logs')).sort();
    expect(logEntries.filter((name) => !/^run-.+\.json$/.test(name))).toEqual(['alice', 'bob', 'lead']);
    expect(logEntries.filter((name) => /^run-.+\.json$/.test(name))).toHaveLength(1);
    const events = orderedLogEvents(root);
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    expect(events.find((e) => e.type === 'done')).toMatchObject({ agent: 'lead', ok: true, exit_code: 0 });
    for (const agent of ['alice', 'bob', 'lead']) {
      for (const file of readdirSync(path.join(root, '.team', 'logs', agent))) {
        expect(readFileSync(path.join(root, '.team', 'logs', agent, file), 'utf8')).not.toContain(TEST_API_KEY);
      }
    }
    checkWorkspace(root, fake, log, events);
  });

  it('in-process: the same scenario with Team, settled on real conditions', async () => {
    const h: TeamHarness = await openTeamHarness({ env: { HUDDLE_IDLE_TIMEOUT_MS: '20000' } });
    cleanups.push(() => h.close());
    const log = installScenario(h.fake);

    h.team.start();
    h.team.lead.prompt(SCENARIO_PROMPT);
    // The headless end condition (docs/contract.md#exit-codes), re-checked on every event.
    await h.waitFor('the team to settle', async () => h.team.lead.lastText === SCENARIO_FINAL && (await h.team.isSettled()), 15_000);

    expect(h.team.lead.lastOutcome).toEqual({ kind: 'end_turn', text: SCENARIO_FINAL });
    for (const name of ['alice', 'bob']) {
      const teammate = h.team.teammates.get(name)!;
      await teammate.done;
      expect(teammate.finished).toBe(true);
      // working from spawn; never stuck in working at the end
      expect(h.statuses(name).at(-1)).toBe('shutdown');
    }
    await h.team.ctx.roster.setStatus('lead', 'shutdown', { reason: 'the run ended' });
    expect(h.fake.unscripted).toEqual([]);
    checkWorkspace(h.root, h.fake, log, h.events);
  });
});

describe('when the team counts as settled (the headless end condition)', () => {
  it('a resting teammate with a message or a claimable task in reach keeps the team unsettled', async () => {
    const h = await openTeamHarness({ env: { HUDDLE_IDLE_TIMEOUT_MS: '20000' } });
    cleanups.push(() => h.close());
    h.fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      const claim = /<auto-claimed>Task #(\d+)/.exec(lastUserTexts(request).join('\n'));
      if (claim) return reply(toolUse('task_update', { task_id: Number(claim[1]), status: 'completed' }));
      return replyText('Ready.');
    });
    await h.spawn('alice', 'Wait.');
    await h.waitForStatus('alice', 'idle');
    // The lead has not started: no turn, nothing queued, an empty inbox.
    expect(await h.team.isSettled()).toBe(true);

    // A message for alice: unsettled from the moment it is sent, though her status still says idle.
    await h.team.bus.send({ from: 'lead', to: 'alice', content: 'One more thing.' });
    expect(await h.team.isSettled()).toBe(false);
    await h.waitFor('alice to answer and rest again', async () => h.requestsOf('alice').length === 2 && (await h.team.isSettled()));
    expect(h.team.ctx.roster.get('alice')?.status).toBe('idle');

    // A claimable task: likewise, until alice has claimed, done and reported it.
    await h.team.ctx.board.create({ subject: 'Tidy up' }, 'lead');
    expect(await h.team.isSettled()).toBe(false);
    // The roster's status is written before its event is emitted: wait for the event too.
    await h.waitFor(
      'alice to finish the task',
      async () => (await h.team.ctx.board.get(1)).status === 'completed' && (await h.team.isSettled()) && h.statuses('alice').at(-1) === 'idle',
    );
    expect((await h.team.ctx.board.get(1)).owner).toBe('alice');
    // Woken (working), then the same status naming the task it claimed (liveness reason).
    expect(h.statuses('alice')).toEqual(['working', 'idle', 'working', 'idle', 'working', 'working', 'idle']);
  });
});
