// The run record: what a run did and cost, in one object (docs/contract.md#run-record): the record a person
// reads at the end of a run, like "PR ready: 5 files · +120 −45 · tests passing · Cost: $3.20 · 12 turns · 8 minutes".
// Built from the events (the record of the run), summed as they pass, plus what only the end
// knows: the board, the spend per task, and git. Written to `.team/logs/run-<stamp>.json`; headless
// runs print summaryLines() as the last lines on stderr, the console shows them on /summary.
import type { HuddleEvent } from '../events/events.js';
import type { Task } from '../store/board.js';
import type { SpendFile } from '../store/spend-ledger.js';
import type { GitChanges } from './git-changes.js';
import type { BacklogIssueRecord } from './backlog-record.js';
import type { BestOfRecord } from './best-of-record.js';
import type { PlantedFile } from '../git/planted-git.js';

/** Commands kept in the record; past this only the count grows. */
const MAX_COMMANDS = 500;

/** A bash command that runs tests (its exit code is a test result). */
const TEST_COMMAND =
  /(^|[\s;&|(])(npm (run )?test|npx (vitest|jest|mocha)|vitest|jest|mocha|pytest|python3? -m (pytest|unittest)|go test|cargo (test|nextest)|make (test|check)|yarn test|pnpm (run )?test|bun test|node --test|deno test|mvn test|gradle test|ctest|rspec|phpunit)\b/;

export interface CommandRecord {
  agent: string;
  command: string;
  ok?: boolean;
  exit_code?: number;
  duration_ms?: number;
}

export interface TestRecord {
  agent: string;
  command: string;
  passed: boolean;
  exit_code?: number;
  /** `bash` (a test command an agent ran) or `verify` (a task's verify gate). */
  via: 'bash' | 'verify';
}

export interface AgentTally {
  cost_usd: number;
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** Of its cache reads, those of its first call: a prefix another agent (a sibling of its role) or an earlier run wrote. */
  shared_cache_read_input_tokens: number;
  /** Its read-only helpers (docs/contract.md#subagents): how many ran, and their part of the spend above. */
  subagents?: { count: number; cost_usd: number; model_calls: number };
}

export interface RunRecord {
  version: 1;
  session_id?: string;
  started_at: string;
  ended_at: string;
  wall_ms: number;
  outcome?: { ok: boolean; exit_code: number; reason?: string };
  tasks: {
    done: Array<{ id: number; subject: string; by: string | null; reviewer?: string }>;
    open: Array<{ id: number; subject: string; status: string; owner: string | null }>;
  };
  /** null: the workspace is not a git repository. */
  files: { changed: number; added: number; removed: number; list: GitChanges['files'] } | null;
  commits: GitChanges['commits'];
  /** Git metadata an agent planted in the repository's git dir (runtime/git/planted-git.ts). */
  planted_git?: PlantedFile[];
  tests: TestRecord[];
  commands: { count: number; list: CommandRecord[] };
  permissions: {
    asked: Array<{ agent: string; tool: string; summary: string }>;
    granted: Array<{ agent: string; tool: string; summary: string; decision: string; by?: string }>;
    denied: Array<{ agent: string; tool: string; summary: string; by?: string }>;
  };
  reviews: Array<{ agent: string; task_id: unknown; verdict: 'approved' | 'changes_requested'; comment?: string }>;
  cost: { total_usd: number; agents: Record<string, AgentTally>; tasks: SpendFile['tasks']; unattributed_usd: number };
  /** `shared_cache_read`: the agents' first calls' cache reads, a prefix another agent or an earlier run wrote (docs/cost.md#a-prefix-shared-by-the-team). */
  tokens: { input: number; output: number; cache_read: number; cache_write: number; cache_hit_ratio: number; shared_cache_read: number };
  model_calls: number;
  /** A backlog run (`huddle run --backlog`): one entry per issue (docs/backlog.md#the-record). */
  backlog?: BacklogIssueRecord[];
  /** Best-of-N runs of this session: candidates, verdict, pick (docs/best-of.md#the-record). */
  best_of?: BestOfRecord[];
}

export interface RecordEnd {
  tasks: Task[];
  spend?: SpendFile;
  git?: GitChanges | undefined;
  plantedGit?: PlantedFile[];
  outcome?: RunRecord['outcome'];
  sessionId?: string;
  backlog?: BacklogIssueRecord[];
  bestOf?: BestOfRecord[];
}

function emptyTally(): AgentTally {
  return {
    cost_usd: 0,
    model_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    shared_cache_read_input_tokens: 0,
  };
}

/** Sums the events of a run as they pass; build() makes the record at any time. */
export class RunRecorder {
  readonly startedAt: Date;
  readonly #agents = new Map<string, AgentTally>();
  readonly #subagentsSeen = new Set<string>();
  readonly #commands: CommandRecord[] = [];
  #commandCount = 0;
  readonly #pendingCommands = new Map<string, CommandRecord>();
  readonly #tests: TestRecord[] = [];
  readonly #asked = new Map<string, { agent: string; tool: string; summary: string }>();
  readonly #permissions: RunRecord['permissions'] = { asked: [], granted: [], denied: [] };
  readonly #reviews: RunRecord['reviews'] = [];

  constructor(startedAt = new Date()) {
    this.startedAt = startedAt;
  }

  readonly onEvent = (event: HuddleEvent): void => {
    switch (event.type) {
      case 'usage': {
        const tally = this.#agents.get(event.agent) ?? emptyTally();
        tally.cost_usd += event.cost_usd;
        tally.model_calls += 1;
        tally.input_tokens += event.input_tokens;
        tally.output_tokens += event.output_tokens;
        tally.cache_read_input_tokens += event.cache_read_input_tokens;
        tally.cache_creation_input_tokens += event.cache_creation_input_tokens;
        if (event.first_call) tally.shared_cache_read_input_tokens += event.cache_read_input_tokens;
        if (event.subagent !== undefined) {
          const helpers = (tally.subagents ??= { count: 0, cost_usd: 0, model_calls: 0 });
          if (!this.#subagentsSeen.has(event.subagent)) {
            this.#subagentsSeen.add(event.subagent);
            helpers.count += 1;
          }
          helpers.cost_usd += event.cost_usd;
          helpers.model_calls += 1;
        }
        this.#agents.set(event.agent, tally);
        return;
      }
      case 'tool_call':
        if (event.name === 'bash') {
          const command = String((event.input as { command?: unknown } | undefined)?.command ?? '');
          const record: CommandRecord = { agent: event.agent, command };
          this.#commandCount += 1;
          if (this.#commands.length < MAX_COMMANDS) this.#commands.push(record);
          this.#pendingCommands.set(event.id, record);
        } else if (event.name === 'review_approve' || event.name === 'review_request_changes') {
          const input = (event.input ?? {}) as { task_id?: unknown; comment?: unknown; feedback?: unknown };
          const comment = event.name === 'review_approve' ? input.comment : input.feedback;
          this.#reviews.push({
            agent: event.agent,
            task_id: input.task_id,
            verdict: event.name === 'review_approve' ? 'approved' : 'changes_requested',
            ...(typeof comment === 'string' && comment ? { comment } : {}),
          });
        }
        return;
      case 'tool_result': {
        const command = this.#pendingCommands.get(event.id);
        if (command) {
          this.#pendingCommands.delete(event.id);
          // A failing code ends the result; a command that succeeded says none (runtime/tools/bash.ts): ok is exit 0.
          const stated = /\[exit code (\d+)\]$/.exec(event.content)?.[1];
          const exitCode = stated !== undefined ? Number(stated) : event.ok ? 0 : undefined;
          command.ok = event.ok;
          command.duration_ms = event.duration_ms;
          if (exitCode !== undefined) command.exit_code = exitCode;
          if (TEST_COMMAND.test(command.command)) {
            this.#tests.push({
              agent: event.agent,
              command: command.command,
              passed: event.ok,
              ...(exitCode !== undefined ? { exit_code: exitCode } : {}),
              via: 'bash',
            });
          }
        }
        // A verify gate's one-line summary (runtime/verify): "verify passed: npm test (exit 0, 3.2 s)".
        for (const match of event.content.matchAll(/^verify (passed|failed): (.+?) \((?:exit (\d+))?.*\)$/gm)) {
          this.#tests.push({
            agent: event.agent,
            command: match[2]!,
            passed: match[1] === 'passed',
            ...(match[3] ? { exit_code: Number(match[3]) } : {}),
            via: 'verify',
          });
        }
        return;
      }
      case 'approval_requested': {
        const asked = { agent: event.agent, tool: event.tool, summary: event.summary };
        this.#asked.set(event.id, asked);
        this.#permissions.asked.push(asked);
        return;
      }
      case 'approval_resolved': {
        const asked = this.#asked.get(event.id);
        if (!asked) return;
        if (event.decision === 'approve' || event.decision === 'always')
          this.#permissions.granted.push({ ...asked, decision: event.decision, ...(event.by ? { by: event.by } : {}) });
        else if (event.decision === 'deny') this.#permissions.denied.push({ ...asked, ...(event.by ? { by: event.by } : {}) });
        return;
      }
      default:
        return;
    }
  };

  build(end: RecordEnd, now = new Date()): RunRecord {
    const agents = Object.fromEntries(this.#agents);
    const tally = Object.values(agents).reduce(
      (sum, a) => ({
        cost: sum.cost + a.cost_usd,
        calls: sum.calls + a.model_calls,
        input: sum.input + a.input_tokens,
        output: sum.output + a.output_tokens,
        read: sum.read + a.cache_read_input_tokens,
        write: sum.write + a.cache_creation_input_tokens,
        shared: sum.shared + a.shared_cache_read_input_tokens,
      }),
      { cost: 0, calls: 0, input: 0, output: 0, read: 0, write: 0, shared: 0 },
    );
    const allInput = tally.input + tally.read + tally.write;
    const done = end.tasks.filter((t) => t.status === 'completed');
    const open = end.tasks.filter((t) => t.status !== 'completed');
    return {
      version: 1,
      ...(end.sessionId ? { session_id: end.sessionId } : {}),
      started_at: this.startedAt.toISOString(),
      ended_at: now.toISOString(),
      wall_ms: now.getTime() - this.startedAt.getTime(),
      ...(end.outcome ? { outcome: end.outcome } : {}),
      tasks: {
        done: done.map((t) => ({ id: t.id, subject: t.subject, by: t.owner, ...(t.reviewer ? { reviewer: t.reviewer } : {}) })),
        open: open.map((t) => ({ id: t.id, subject: t.subject, status: t.status, owner: t.owner })),
      },
      files: end.git ? { changed: end.git.files.length, added: end.git.added, removed: end.git.removed, list: end.git.files } : null,
      commits: end.git?.commits ?? [],
      ...(end.plantedGit?.length ? { planted_git: end.plantedGit } : {}),
      tests: [...this.#tests],
      commands: { count: this.#commandCount, list: [...this.#commands] },
      permissions: structuredClone(this.#permissions),
      reviews: [...this.#reviews],
      cost: { total_usd: tally.cost, agents, tasks: end.spend?.tasks ?? {}, unattributed_usd: end.spend?.unattributed.cost_usd ?? 0 },
      tokens: {
        input: tally.input,
        output: tally.output,
        cache_read: tally.read,
        cache_write: tally.write,
        cache_hit_ratio: allInput > 0 ? tally.read / allInput : 0,
        shared_cache_read: tally.shared,
      },
      model_calls: tally.calls,
      ...(end.backlog ? { backlog: end.backlog } : {}),
      ...(end.bestOf?.length ? { best_of: end.bestOf } : {}),
    };
  }
}

function tokens(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

function duration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return minutes < 60 ? `${minutes} min ${Math.round((ms % 60_000) / 1000)} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The record in a few lines for a person (headless stderr, the console's /summary). */
export function summaryLines(record: RunRecord): string[] {
  const byWhom = new Map<string, number>();
  for (const task of record.tasks.done) byWhom.set(task.by ?? 'nobody', (byWhom.get(task.by ?? 'nobody') ?? 0) + 1);
  const who = [...byWhom].map(([name, n]) => `${name} ${n}`).join(', ');
  const files = record.files
    ? `${record.files.changed} file${record.files.changed === 1 ? '' : 's'} changed +${record.files.added} −${record.files.removed}`
    : 'files: not a git repository';
  const passed = record.tests.filter((t) => t.passed).length;
  const failed = record.tests.length - passed;
  const tests = record.tests.length === 0 ? 'no tests run' : failed === 0 ? `tests passing (${passed})` : `tests: ${passed} passed, ${failed} failed`;
  const p = record.permissions;
  const agents = Object.entries(record.cost.agents)
    .map(([name, a]) => `${name} $${a.cost_usd.toFixed(4)}${a.subagents ? ` incl. ${a.subagents.count} subagent${a.subagents.count === 1 ? '' : 's'}` : ''}`)
    .join(', ');
  const t = record.tokens;
  return [
    `tasks: ${record.tasks.done.length} done${who ? ` (${who})` : ''}, ${record.tasks.open.length} open · ${files} · ${record.commits.length} commit${record.commits.length === 1 ? '' : 's'} · ${tests}`,
    `commands: ${record.commands.count} · permissions: ${p.asked.length} asked, ${p.granted.length} granted, ${p.denied.length} denied · reviews: ${record.reviews.length}`,
    `cost: $${record.cost.total_usd.toFixed(4)}${agents ? ` (${agents})` : ''} · ${record.model_calls} model call${record.model_calls === 1 ? '' : 's'} · tokens: ${tokens(t.input + t.cache_read + t.cache_write)} in (${Math.round(t.cache_hit_ratio * 100)}% cache reads, ${tokens(t.cache_write)} written), ${tokens(t.output)} out · ${duration(record.wall_ms)}`,
  ];
}
