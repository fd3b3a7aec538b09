// An in-process team for tests: Team.open with the real ModelClient against the fake Messages API,
// an EventHub that collects every event (and writes .team/logs like a headless run), and waits on
// real conditions (events, files, recorded requests) with a deadline that is only a hang guard.
//
// Also the scripted three-task scenario shared by the headless and the in-process end-to-end tests.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Team } from '../../src/agents/lifecycle/team.js';
import type { McpToolSource } from '../../src/agents/tools/mcp-tools.js';
import { ProjectMemory } from '../../src/agents/prompts/memory.js';
import { HookRunner } from '../../src/runtime/hooks/hook-runner.js';
import type { Settings } from '../../src/runtime/settings/schema.js';
import type { Teammate } from '../../src/agents/lifecycle/teammate.js';
import type { SpawnRequest } from '../../src/agents/tools/team-tools.js';
import type { Message } from '../../src/runtime/store/bus.js';
import { resolveConfig, type HuddleConfig } from '../../src/runtime/config.js';
import { openFileStore } from '../../src/runtime/store/file/file-store.js';
import { EventHub, type EventRecord } from '../../src/runtime/events/events.js';
import { ModelClient, modelClientOptions } from '../../src/runtime/model/model-client.js';
import type { Member } from '../../src/runtime/store/roster.js';
import type { MemberStatus } from '../../src/runtime/vocabulary.js';
import { Workspace } from '../../src/runtime/workspace/workspace.js';
import { agentStateDirsOf } from '../../src/runtime/sandbox/index.js';
import { TeamSession } from '../../src/session/team-session.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest, type Scripted } from './fake-api.ts';

export const TEST_API_KEY = 'sk-test-huddle-0123456789abcdef';

export interface TeamHarnessOptions {
  /** HUDDLE_* settings (strings, as in the environment), over the harness defaults. */
  env?: Record<string, string>;
  shutdownGraceMs?: number;
  /** Share a fake server (the harness then does not close it). */
  fake?: FakeApi;
  /**
   * Settings as the session core gives them (docs/contract.md#settings-files): role overrides, verify gates, hooks (a
   * HookRunner is made from them). A function gets the workspace root (for paths in commands).
   */
  settings?: Settings | ((root: string) => Settings);
  /** MCP servers for the team's tools (the test starts and closes them). */
  mcp?: McpToolSource;
  /** Project instructions: a ProjectMemory over the workspace (with `home` as the user's home). */
  memory?: { home: string };
}

export interface TeamHarness {
  root: string;
  workspace: Workspace;
  fake: FakeApi;
  hub: EventHub;
  /** Every event so far, in emission order. */
  events: EventRecord[];
  config: HuddleConfig;
  team: Team;
  /** The same team as the faces see it: the session core's lookups and intents. */
  session: TeamSession;
  /**
   * Resolves with the first truthy result of `probe`, checked now, after every event and every
   * 20 ms (for conditions on files and recorded requests). Rejects after `timeoutMs`: a hang
   * guard, never the thing a test relies on.
   */
  waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs?: number): Promise<NonNullable<T>>;
  /** The first event (already seen or still to come) that matches. */
  waitForEvent(what: string, match: (event: EventRecord) => boolean, timeoutMs?: number): Promise<EventRecord>;
  /** Resolves when the roster says `agent` has `status`. */
  waitForStatus(agent: string, status: MemberStatus, timeoutMs?: number): Promise<Member>;
  /** The requests the fake server received from `agent` (by its system prompt), oldest first. */
  requestsOf(agent: string): RecordedRequest[];
  /** The messages in `agent`'s inbox file, delivered or not. */
  inbox(agent: string): Message[];
  /** Spawns a teammate as the lead would (role coder unless given). */
  spawn(name: string, prompt: string, extra?: Partial<SpawnRequest>): Promise<Teammate>;
  /** The status events of `agent`, in order. */
  statuses(agent: string): string[];
  close(): Promise<void>;
}

export async function openTeamHarness(options: TeamHarnessOptions = {}): Promise<TeamHarness> {
  const fake = options.fake ?? (await startFakeApi());
  const root = mkdtempSync(path.join(tmpdir(), 'huddle-team-'));
  const config = resolveConfig(
    { cwd: root },
    {
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: fake.url,
      HUDDLE_IDLE_TIMEOUT_MS: '20000',
      HUDDLE_MAX_RETRIES: '2',
      HUDDLE_RETRY_BASE_MS: '10',
      HUDDLE_REQUEST_TIMEOUT_MS: '20000',
      ...options.env,
    },
  );
  const workspace = new Workspace(root);
  const hub = new EventHub();
  const events: EventRecord[] = [];
  const listeners = new Set<() => void>();
  hub.subscribe((event) => {
    events.push(event);
    for (const listener of [...listeners]) listener();
  });
  const store = await openFileStore(workspace, { hub, secrets: [TEST_API_KEY] });
  const settings = typeof options.settings === 'function' ? options.settings(workspace.root) : options.settings;
  const team = await Team.open({
    config,
    workspace,
    hub,
    store,
    backend: new ModelClient(modelClientOptions(config)),
    ...(options.shutdownGraceMs !== undefined ? { shutdownGraceMs: options.shutdownGraceMs } : {}),
    ...(settings ? { settings } : {}),
    ...(settings?.hooks ? { hooks: new HookRunner({ hooks: settings.hooks, sessionId: 'test-session', projectDir: workspace.root }) } : {}),
    ...(options.mcp ? { mcp: options.mcp } : {}),
    ...(options.memory ? { memory: new ProjectMemory({ workspaceRoot: workspace.root, home: options.memory.home }) } : {}),
  });

  // The bound only catches a hang (a busy machine is slow, not wrong); it stays under the test's own timeout.
  const waitFor = <T>(what: string, probe: () => T | Promise<T>, timeoutMs = 25_000): Promise<NonNullable<T>> =>
    new Promise((resolve, reject) => {
      let done = false;
      let running = false;
      let again = false;
      const finish = (error: Error | undefined, value?: NonNullable<T>) => {
        if (done) return;
        done = true;
        clearTimeout(guard);
        clearInterval(tick);
        listeners.delete(check);
        if (error) reject(error);
        else resolve(value!);
      };
      const check = (): void => {
        if (done) return;
        if (running) {
          again = true;
          return;
        }
        running = true;
        void (async () => {
          try {
            do {
              again = false;
              const value = await probe();
              if (value) return finish(undefined, value as NonNullable<T>);
            } while (again && !done);
          } catch (error) {
            finish(error as Error);
          } finally {
            running = false;
          }
        })();
      };
      const guard = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      const tick = setInterval(check, 20);
      listeners.add(check);
      check();
    });

  const session = new TeamSession({ team, store, hub, workspace, config, secrets: [TEST_API_KEY], decision: 'new' });
  const harness: TeamHarness = {
    root,
    workspace,
    fake,
    hub,
    events,
    config,
    team,
    session,
    waitFor,
    waitForEvent: (what, match, timeoutMs) => waitFor(what, () => events.find(match), timeoutMs),
    waitForStatus: (agent, status, timeoutMs) =>
      waitFor(
        `${agent} to be ${status}`,
        () => {
          const member = team.ctx.roster.get(agent);
          return member?.status === status ? member : undefined;
        },
        timeoutMs,
      ),
    requestsOf: (agent) => fake.requests.filter((request) => request.agent === agent),
    inbox: (agent) => readInboxFile(path.join(workspace.teamDir, 'inbox', `${agent}.jsonl`)),
    async spawn(name, prompt, extra = {}) {
      await team.spawn({ name, role: 'coder', prompt, ...extra }, 'lead');
      return team.teammates.get(name)!;
    },
    statuses: (agent) => events.filter((e) => e.agent === agent && e.type === 'status').map((e) => String(e.status)),
    async close() {
      try {
        await team.close('test over');
      } finally {
        await store.close();
        if (!options.fake) await fake.close();
        rmSync(root, { recursive: true, force: true });
        // The private config directories of its external agents (Claude Code's sessions…).
        rmSync(agentStateDirsOf(root), { recursive: true, force: true });
      }
    },
  };
  return harness;
}

// ---- reading requests ---------------------------------------------------------------------

type Block = { type: string; text?: string; name?: string; input?: unknown; id?: string; tool_use_id?: string; content?: unknown; is_error?: boolean };
type Turn = { role: string; content: string | Block[] };

function blocksOf(turn: Turn | undefined): Block[] {
  if (!turn) return [];
  return typeof turn.content === 'string' ? [{ type: 'text', text: turn.content }] : turn.content;
}

/** The messages of a recorded request. */
export function turnsOf(request: RecordedRequest): Turn[] {
  return (request.body?.messages ?? []) as Turn[];
}

/** The last user turn of a request: what is new for the model. */
export function lastUserTurn(request: RecordedRequest): Turn | undefined {
  return turnsOf(request).findLast((turn) => turn.role === 'user');
}

/** The text blocks of the last user turn. */
export function lastUserTexts(request: RecordedRequest): string[] {
  return blocksOf(lastUserTurn(request)).flatMap((block) => (block.type === 'text' ? [block.text ?? ''] : []));
}

/** The tool_result blocks of the last user turn. */
export function lastToolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error: boolean }> {
  return blocksOf(lastUserTurn(request)).flatMap((block) =>
    block.type === 'tool_result' ? [{ tool_use_id: String(block.tool_use_id), content: resultText(block.content), is_error: block.is_error === true }] : [],
  );
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join('');
  return '';
}

/** Every text block of every user turn. */
export function allUserTexts(request: RecordedRequest): string[] {
  return turnsOf(request)
    .filter((turn) => turn.role === 'user')
    .flatMap((turn) => blocksOf(turn).flatMap((block) => (block.type === 'text' ? [block.text ?? ''] : [])));
}

/** The tool_use blocks the assistant sent in the history of a request. */
export function pastToolUses(request: RecordedRequest): Array<{ id: string; name: string; input: any }> {
  return turnsOf(request)
    .filter((turn) => turn.role === 'assistant')
    .flatMap((turn) =>
      blocksOf(turn).flatMap((block) => (block.type === 'tool_use' ? [{ id: String(block.id), name: String(block.name), input: block.input }] : [])),
    );
}

/** The tool names offered in a request. */
export function toolNames(request: RecordedRequest): string[] {
  return ((request.body?.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
}

/** The system prompt text of a request (its blocks joined as src/runtime/model/system-prompt.ts joins them). */
export function systemText(request: RecordedRequest): string {
  const system = request.body?.system;
  if (typeof system === 'string') return system;
  return ((system ?? []) as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n\n');
}

/** The system blocks of a request: the one every agent of a role shares (marked for the cache), then the agent's own. */
export function systemBlocks(request: RecordedRequest): Array<{ text: string; cache_control?: unknown }> {
  const system = request.body?.system;
  return typeof system === 'string' ? [{ text: system }] : ((system ?? []) as Array<{ text: string; cache_control?: unknown }>);
}

/** One message as an `<inbox>` turn carries it (docs/contract.md#injected-turns): who sent it first, then the message without its id. */
export function inboxLine(sender: 'person' | 'huddle' | 'agent', { id: _id, ...message }: Message): string {
  return JSON.stringify({ sender, ...message });
}

/** What tells one delivered message from another in an `<inbox>` turn, which leaves the id out: who, what and when. */
export function messageKey(message: Pick<Message, 'from' | 'type' | 'content' | 'ts'>): string {
  return JSON.stringify([message.from, message.type, message.content, message.ts]);
}

/** The messages of every `<inbox>` … `</inbox>` block in `texts`, one JSON line each. */
export function inboxMessages(texts: string[]): Message[] {
  const out: Message[] = [];
  for (const text of texts) {
    for (const match of text.matchAll(/<inbox>\n([\s\S]*?)\n<\/inbox>/g)) {
      for (const line of match[1]!.split('\n')) out.push(JSON.parse(line) as Message);
    }
  }
  return out;
}

export function readInboxFile(file: string): Message[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Message];
      } catch {
        return [];
      }
    });
}

/** Every event of every `.team/logs/<agent>/session-*.ndjson` file of a workspace. */
export function readEventLogs(root: string): EventRecord[] {
  const logs = path.join(root, '.team', 'logs');
  const events: EventRecord[] = [];
  let agents: string[] = [];
  try {
    // A directory per agent; the run records (run-<stamp>.json) sit beside them.
    agents = readdirSync(logs, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return events;
  }
  for (const agent of agents) {
    for (const file of readdirSync(path.join(logs, agent))) {
      if (!/^session-.*\.ndjson$/.test(file)) continue;
      for (const line of readFileSync(path.join(logs, agent, file), 'utf8').split('\n')) {
        if (line.trim()) events.push(JSON.parse(line) as EventRecord);
      }
    }
  }
  return events;
}

// ---- the three-task scenario ----------------------------------------------------------------

export const SCENARIO_PROMPT = 'Build the greeting kit: three small files, with the second one after the first.';
export const SCENARIO_FINAL = 'All three tasks are done: out/task-1.txt, out/task-2.txt and out/task-3.txt. The team has shut down.';
export const SCENARIO_TASKS = ['Write the greeting', 'Write the reply to the greeting', 'Write the farewell'];

export interface ScenarioLog {
  /** Index in fake.requests of the request answered with task_update {task_id, status: completed}, by task. */
  completionAnswered: Map<number, number>;
  /** Index in fake.requests of the first request carrying `<auto-claimed>Task #<id>`, by task. */
  autoClaimSeen: Map<number, number>;
  /** Who answered each auto-claim. */
  workedBy: Map<number, string>;
  /** Shutdown request ids each teammate approved. */
  approved: Map<string, string>;
}

/**
 * The lead plans three tasks (#2 blocked by #1), spawns alice and bob, waits for three reports,
 * asks both to shut down and, once both answered, ends with SCENARIO_FINAL. The teammates answer
 * whatever the last user turn of each request holds, so which of them wins which task does not
 * matter: an auto-claimed task → write its file, complete it, report; a shutdown_request → approve
 * it with its request_id; anything else → idle.
 */
export function installScenario(fake: FakeApi): ScenarioLog {
  const log: ScenarioLog = { completionAnswered: new Map(), autoClaimSeen: new Map(), workedBy: new Map(), approved: new Map() };
  fake.respond((request) => {
    const index = fake.requests.indexOf(request);
    if (request.agent === 'lead') return leadStep(request);
    if (request.agent === 'alice' || request.agent === 'bob') return teammateStep(request.agent, request, index, log);
    return undefined;
  });
  return log;
}

function leadStep(request: RecordedRequest): Scripted {
  const turns = turnsOf(request);
  if (turns.length === 1) {
    return reply(
      toolUse('task_create', { subject: SCENARIO_TASKS[0], description: 'Write out/task-1.txt' }),
      toolUse('task_create', { subject: SCENARIO_TASKS[1], description: 'Write out/task-2.txt', blockedBy: [1] }),
      toolUse('task_create', { subject: SCENARIO_TASKS[2], description: 'Write out/task-3.txt' }),
      toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Take tasks from the board; report each to lead.' }),
      toolUse('spawn_teammate', { name: 'bob', role: 'coder', prompt: 'Take tasks from the board; report each to lead.' }),
    );
  }
  const received = inboxMessages(allUserTexts(request));
  const reported = new Set(received.flatMap((m) => [...m.content.matchAll(/Task #(\d+) done by/g)].map((match) => Number(match[1]))));
  const asked = pastToolUses(request).filter((use) => use.name === 'shutdown_request').length;
  const answers = received.filter((m) => m.type === 'shutdown_response').length;
  if (reported.size >= 3 && asked === 0) {
    return reply(toolUse('shutdown_request', { teammate: 'alice' }), toolUse('shutdown_request', { teammate: 'bob' }));
  }
  if (asked > 0 && answers >= 2) return replyText(SCENARIO_FINAL);
  return replyText('Waiting for the team.');
}

function teammateStep(name: string, request: RecordedRequest, index: number, log: ScenarioLog): Scripted {
  const texts = lastUserTexts(request);
  const claim = /<auto-claimed>Task #(\d+): [^<]*<\/auto-claimed>/.exec(texts.join('\n'));
  if (claim) {
    const id = Number(claim[1]);
    if (!log.autoClaimSeen.has(id)) log.autoClaimSeen.set(id, index);
    log.workedBy.set(id, name);
    log.completionAnswered.set(id, index);
    return reply(
      toolUse('write_file', { path: `out/task-${id}.txt`, content: `task ${id} by ${name}\n` }),
      toolUse('task_update', { task_id: id, status: 'completed' }),
      toolUse('send_message', { to: 'lead', content: `Task #${id} done by ${name}: wrote out/task-${id}.txt` }),
    );
  }
  const shutdown = inboxMessages(texts).find((m) => m.type === 'shutdown_request');
  if (shutdown?.request_id) {
    log.approved.set(name, shutdown.request_id);
    return reply(toolUse('shutdown_response', { request_id: shutdown.request_id, approve: true }));
  }
  if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
  return replyText('Ready; waiting for tasks.');
}
