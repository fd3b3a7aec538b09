// A running team session: the one object every face talks to. Lookups (who is on the team, the
// board, what waits for the person, what was spent) and intents (prompt the lead, message an
// agent, interrupt, spawn, shut down, restart, compact, clear, set the model, budgets, approvals,
// worktrees). Faces — the console, headless runs, and later a worker, `huddle mcp` and the
// control socket — never reach into the Team, its agents or their loops: they come here.
import type { Team } from '../agents/lifecycle/team.js';
import type { ResumeReport } from '../agents/lifecycle/resume.js';
import type { RestartResult } from '../agents/lifecycle/restart.js';
import type { CompactionResult } from '../agents/loop/compaction.js';
import type { TurnOutcome } from '../agents/loop/agent-loop.js';
import type { HuddleConfig } from '../runtime/config.js';
import type { EventFields, EventHub, EventListener } from '../runtime/events/events.js';
import { addUsage, emptyUsage } from '../runtime/model/pricing.js';
import type { ApprovalDecision, ApprovalOutcome, ApprovalRequest } from '../runtime/store/approvals.js';
import type { UntrustedFile } from '../runtime/settings/trust.js';
import type { Board, CreateTaskInput, Task, UpdateTaskInput } from '../runtime/store/board.js';
import type { SpendFile } from '../runtime/store/spend-ledger.js';
import type { SpawnLike } from '../runtime/process/spawn.js';
import type { Bus, Message } from '../runtime/store/bus.js';
import type { BacklogIssueRecord } from '../runtime/record/backlog-record.js';
import type { BestOfRecord } from '../runtime/record/best-of-record.js';
import type { Shipper, VerdictReceiver } from '../agents/team-context.js';
import type { Member } from '../runtime/store/roster.js';
import type { LoggedEvent } from '../runtime/store/event-store.js';
import { StoreError, type TeamStore } from '../runtime/store/team-store.js';
import { agentEmitter } from '../runtime/events/events.js';
import { ToolRegistry } from '../runtime/tools/registry.js';
import { planSubmissionTool, teammateTools, type SpawnRequest } from '../agents/tools/team-tools.js';
import type { ExternalTeammate } from '../agents/external/external-teammate.js';
import type { Teammate } from '../agents/lifecycle/teammate.js';
import type { TerminalView } from '../agents/external/pty-driver.js';
import { checkpointsAtRunEnd } from '../agents/tools/checkpointed-tools.js';
import { scrub } from '../runtime/store/file/event-log.js';
import { gitChanges } from '../runtime/record/git-changes.js';
import { plantedLine, quarantinePlanted, type GitMetadataSnapshot, type PlantedFile } from '../runtime/git/planted-git.js';
import { RunRecorder, type RunRecord } from '../runtime/record/run-record.js';
import { LEAD_NAME, PERSON_SENDER } from '../runtime/vocabulary.js';
import type { McpServers, McpServerStatus } from '../runtime/mcp/mcp-servers.js';
import { settingsRows, type SettingsRow } from '../runtime/settings/describe.js';
import type { LoadedSettings } from '../runtime/settings/load.js';
import type { Settings } from '../runtime/settings/schema.js';
import type { Workspace } from '../runtime/workspace/workspace.js';
import { hostPlacement, leaveWorker } from '../agents/lifecycle/placement.js';
import { loadRoles } from '../agents/lifecycle/roles.js';
import { BudgetIntents } from './budget-intents.js';
import { untilDone, type RunEnd } from './run-end.js';
import type { PermissionMode } from '../runtime/permissions/permission-mode.js';
import { WorktreeIntents } from './worktree-intents.js';

export type { RunEnd } from './run-end.js';
/** A program's terminal in a pane (command teammates, shell panes): what the console draws. */
export type { TerminalView } from '../agents/external/pty-driver.js';

/** The role of the person's shell panes (/shell, !cmd). */
export const SHELL_ROLE = 'shell';

export interface SessionParts {
  team: Team;
  store: TeamStore;
  hub: EventHub;
  workspace: Workspace;
  config: HuddleConfig;
  secrets: string[];
  /** What was done with a team left in the workspace. */
  decision: 'new' | 'resume' | 'fresh';
  /** Where --fresh archived the old team (relative to the workspace). */
  archived?: string | undefined;
  /** The settings with where each value came from (`/config`); absent for a session opened from a bare config. */
  loaded?: LoadedSettings | undefined;
  /** Start-up notices for the person (deprecated files, servers that did not start, what the repository runs). */
  notices?: string[];
  /** The session's MCP servers (closed with it). */
  mcp?: McpServers;
  /** Sums the session's events from its first (subscribed when the hub was made). */
  recorder?: RunRecorder;
  /** The git commit the session began at (undefined: not a repository). */
  gitBase?: Promise<string | undefined>;
  /** The repository's git metadata as the session opened (what is new at the end was planted). */
  gitMetadata?: GitMetadataSnapshot | undefined;
}

/** A run record and where it was written (relative to the workspace). */
export interface RecordedRun {
  record: RunRecord;
  file: string;
}

/** The last verify run of a task in this session, as `/tasks` shows it. */
/** What a face adds to the run record: its session id, a backlog run's issues. */
export interface RecordExtras {
  sessionId?: string;
  backlog?: BacklogIssueRecord[];
  bestOf?: BestOfRecord[];
}

export interface VerifyMark {
  ok: boolean;
  summary: string;
}

/** What a face gets back from /compact: done now, or deferred to before the agent's next model call. */
export type CompactOutcome = { deferred: true } | { deferred: false; result: CompactionResult };

export interface BacklogParts {
  board: Board;
  bus: Bus;
  spawn(request: SpawnRequest): Promise<string>;
  enableShipping(ship: Shipper): void;
  /** Keeps the run from ending while huddle waits on something outside the team; call the result to let go. */
  hold(): () => void;
  /**
   * Who approves the plans of `role`'s teammates in this run (its role file's plan_approver, else plans.approver as
   * the settings, playbook and flags made it), for the record and the lead's prompt.
   */
  planApprover(role: string): string;
  /** The teammate still has to have its plan approved before it builds. */
  planPending(name: string): boolean;
}

export interface AgentSpend {
  name: string;
  costUsd: number;
  modelCalls: number;
}

export class TeamSession {
  readonly hub: EventHub;
  readonly workspace: Workspace;
  readonly decision: SessionParts['decision'];
  readonly archived: string | undefined;
  /** Budgets: spend vs limits, set, extend (the console's /budget). */
  readonly budget: BudgetIntents;
  /** Teammates' git worktrees: merge, diff, remove, list. */
  readonly worktrees: WorktreeIntents;
  readonly #team: Team;
  readonly #store: TeamStore;
  readonly #config: HuddleConfig;
  readonly #secrets: string[];
  readonly #loaded: LoadedSettings | undefined;
  readonly #mcp: McpServers | undefined;
  /** Task id → its last verify run, from the `verify` events of this session. */
  readonly #verified = new Map<number, VerifyMark>();
  readonly #verifyListeners = new Set<() => void>();
  readonly #recorder: RunRecorder;
  readonly #gitBase: Promise<string | undefined>;
  readonly #gitMetadata: GitMetadataSnapshot | undefined;
  /** Planted git metadata found so far (each said once). */
  readonly #planted = new Map<string, PlantedFile>();
  /** The run record written when the session closed (close({ record })). */
  recorded: RecordedRun | undefined;
  #resumed: Promise<ResumeReport> | undefined;
  #closed: Promise<void> | undefined;
  /**
   * Git metadata planted since the session opened (runtime/git/planted-git.ts): what git never
   * writes there is moved into .team/quarantine/, and each file is said once as a warning.
   */
  checkPlantedGit(): PlantedFile[] {
    if (!this.#gitMetadata) return [];
    for (const planted of quarantinePlanted(this.#gitMetadata, this.workspace.teamDir)) {
      if (this.#planted.has(planted.path)) continue;
      this.#planted.set(planted.path, planted);
      this.hub.emit('huddle', 'warning', { message: plantedLine(planted) });
    }
    return [...this.#planted.values()];
  }

  /**
   * At a run's end: the repository rebuilt if the run broke it, and the person's own changes the run took
   * away (from the checkpoints); one line each, for the face to say once.
   */
  workspaceAtRunEnd(): Promise<string[]> {
    return checkpointsAtRunEnd(this.workspace.root);
  }

  /** Closed with the session: the control socket (control-server.ts), once a face opened it. */
  #onClose: Array<() => Promise<void>> = [];
  /** Start-up notices, one line each (headless prints them as warnings; the console shows them in the lead's pane). */
  readonly notices: readonly string[];

  constructor(parts: SessionParts) {
    this.#team = parts.team;
    this.#store = parts.store;
    this.#config = parts.config;
    this.#secrets = parts.secrets;
    this.#loaded = parts.loaded;
    this.#mcp = parts.mcp;
    this.notices = parts.notices ?? [];
    parts.hub.subscribe((event) => {
      if (event.type !== 'verify') return;
      this.#verified.set(event.task_id, { ok: event.ok, summary: event.summary });
      for (const listener of this.#verifyListeners) listener();
    });
    this.hub = parts.hub;
    this.workspace = parts.workspace;
    this.decision = parts.decision;
    this.archived = parts.archived;
    this.budget = new BudgetIntents(parts.team.budget);
    this.worktrees = new WorktreeIntents(parts.workspace.root, (name) => name !== LEAD_NAME && this.isLive(name));
    this.#gitBase = parts.gitBase ?? Promise.resolve(undefined);
    this.#gitMetadata = parts.gitMetadata;
    // Checked after each tool an agent ran too (a few lstat calls), so the console says it while the run
    // goes on and the person's own git never meets the file. After the event's dispatch, not inside it.
    if (this.#gitMetadata) {
      parts.hub.subscribe((event) => {
        if (event.type === 'tool_result') queueMicrotask(() => this.checkPlantedGit());
      });
    }
    if (parts.recorder) {
      this.#recorder = parts.recorder;
    } else {
      this.#recorder = new RunRecorder();
      this.hub.subscribe(this.#recorder.onEvent);
    }
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  subscribe(listener: EventListener): () => void {
    return this.hub.subscribe(listener);
  }

  /** `text` with every secret (the API key) redacted: for anything a face prints. */
  scrub(text: string): string {
    return scrub(text, this.#secrets);
  }

  /** The model the lead (and new teammates) use. */
  get model(): string {
    return this.#config.model;
  }

  /** Brings back the team left in the workspace when the session was opened to resume it (once; before start). */
  resume(): Promise<ResumeReport | undefined> {
    if (this.decision !== 'resume') return Promise.resolve(undefined);
    return (this.#resumed ??= this.#team.resumeMembers());
  }

  /**
   * What every agent of the team in this workspace said and did before this session, from the
   * event record (the store's EventStore), in the roster's order: for faces that show it again.
   */
  async earlierEvents(): Promise<Array<{ agent: string; events: LoggedEvent[] }>> {
    const events = this.#store.events;
    const names = await events.agents().catch(() => [] as string[]);
    const order = [
      LEAD_NAME,
      ...this.members()
        .map((member) => member.name)
        .filter((name) => name !== LEAD_NAME),
    ];
    const sorted = [...order.filter((name) => names.includes(name)), ...names.filter((name) => !order.includes(name) && name !== 'huddle' && name !== 'bus')];
    const out: Array<{ agent: string; events: LoggedEvent[] }> = [];
    for (const agent of sorted) out.push({ agent, events: await events.read(agent).catch(() => [] as LoggedEvent[]) });
    return out;
  }

  /** Starts the lead: from now on it runs prompts and wakes on its inbox. */
  start(): void {
    this.#team.start();
  }

  /** Resolves when a run without a person is over (docs/contract.md#exit-codes), failed, stalled or out of budget (run-end.ts). */
  untilDone(): Promise<RunEnd> {
    return untilDone(this.#team, this.hub, this.#store);
  }

  /**
   * Ends the session: stops every agent and closes the stores. `resumable` leaves the roster's
   * statuses as they are (nobody `shutdown`) so `--resume` continues the team; otherwise the
   * team is finished. `done` is logged as the run's last event before the stores close.
   */
  close(options: { reason: string; resumable?: boolean; done?: EventFields['done']; record?: RecordExtras }): Promise<void> {
    return (this.#closed ??= this.#close(options));
  }

  async #close({ reason, resumable, done, record }: { reason: string; resumable?: boolean; done?: EventFields['done']; record?: RecordExtras }): Promise<void> {
    try {
      if (resumable) {
        await this.#team.suspend(reason);
      } else {
        // Nobody new starts first (a spawn under way finishes placing its teammate): recalled before that, a
        // placement still being made was missed and ran on its worker for a finished team.
        await this.#team.stopSpawning(reason);
        // A recall that fails (the database gone) must not keep the team here from closing: its own teammates stop next.
        await this.#team.recallRemote(reason).catch(() => undefined);
        await this.#team.stopAll(reason);
        // After the lead's loop has ended: a turn still unwinding (a stall, an interrupt) would set it idle again.
        await this.#team.close(reason);
        await this.#team.ctx.roster.setStatus(LEAD_NAME, 'shutdown', { reason });
      }
    } catch (error) {
      // After a store failure what is left of the store may fail too: the first failure is what is reported.
      if (!(error instanceof StoreError && this.#store.failure)) throw error;
    }
    // After every agent has stopped, before the logs close (its run is logged too).
    await this.#team.sessionHook({ hook_event_name: 'SessionEnd', reason });
    if (done) this.hub.emit(LEAD_NAME, 'done', done);
    // The person's own git would follow what an agent planted in .git: moved aside, said once.
    this.checkPlantedGit();
    // A store that can no longer write (a full disk) gets no run record: its one line says why.
    if (record && !this.#store.failure) {
      const outcome = done ? { ok: done.ok, exit_code: done.exit_code, ...(done.reason ? { reason: done.reason } : { reason }) } : undefined;
      this.recorded = await this.runRecord({ ...record, ...(outcome ? { outcome } : {}) }).catch((error: Error) => {
        this.hub.emit('huddle', 'warning', { message: `could not write the run record: ${error.message}` });
        return undefined;
      });
    }
    // Closing: each part closes on its own; one that fails must not keep the rest open.
    for (const close of this.#onClose.splice(0)) await close().catch(() => undefined);
    await this.#mcp?.close();
    await this.#store.close(reason);
  }

  /** Something to close with the session (before the stores): the control socket. */
  closeWith(close: () => Promise<void>): void {
    this.#onClose.push(close);
  }

  /**
   * The run record (runtime/record): built from the session's events, the board, the spend per
   * task and git, and written to .team/logs/run-<stamp>.json. Headless runs write one as they end;
   * the console on /summary.
   */
  async runRecord(options: RecordExtras & { outcome?: RunRecord['outcome'] } = {}): Promise<RecordedRun> {
    await this.#store.spend.flush();
    const planted = this.checkPlantedGit();
    const base = await this.#gitBase;
    const [tasks, git] = await Promise.all([this.tasks().catch(() => []), base ? gitChanges(this.workspace.root, base) : Promise.resolve(undefined)]);
    const record = this.#recorder.build({
      tasks,
      spend: this.#store.spend.data,
      git,
      ...(planted.length ? { plantedGit: planted } : {}),
      ...(options.outcome ? { outcome: options.outcome } : {}),
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      ...(options.backlog ? { backlog: options.backlog } : {}),
      ...(options.bestOf ? { bestOf: options.bestOf } : {}),
    });
    const file = await this.#store.events.saveRunRecord(record as unknown as Record<string, unknown>);
    return { record, file: this.workspace.relative(file) };
  }

  // ---- a worker host (`huddle worker`) ----------------------------------------------------------

  /** Runs the teammates the lead places on this host, up to `slots` at once. */
  async serveAsWorker(slots: number): Promise<void> {
    const hosts = this.#store.hosts;
    if (!hosts) throw new StoreError('huddle worker needs a team on PostgreSQL (--team URL)');
    await hosts.serve(slots, (placement, stop) => hostPlacement(this.#team, placement, stop));
  }

  /** Called once when this host's lease lapsed: its teammates were handed back, nothing it writes counts. */
  onHostLost(listener: (error: StoreError) => void): () => void {
    return this.#store.hosts?.onLost(listener) ?? (() => undefined);
  }

  /** A worker stopping on purpose: its teammates stop, their tasks go back, the lead is told; then it closes. */
  async leaveAsWorker(reason: string): Promise<void> {
    // Leaving the team on close: a database already gone has nothing to leave.
    await leaveWorker(this.#team, reason).catch(() => undefined);
    await this.close({ reason, resumable: true });
  }

  /** This process's host id on a team shared by several hosts (PostgreSQL). */
  get host(): string | undefined {
    return this.#store.hosts?.self;
  }

  /** The teammates running in this process, by name. */
  liveHere(): string[] {
    return this.#team.liveTeammates().map((teammate) => teammate.name);
  }

  // ---- lookups --------------------------------------------------------------------------------

  get teamName(): string {
    return this.#team.ctx.teamName;
  }

  /** The roster: every member, with role, status and why. */
  members(): Member[] {
    return this.#team.ctx.roster.members();
  }

  /** Who approves the plans of a teammate in `role` (its role file's plan_approver over plans.approver): `lead`, `person` or `auto-after N min`. */
  planApprover(role: string): string {
    const { config } = this.#team.ctx;
    const approver = loadRoles(this.workspace.teamDir).roles.get(role)?.plan_approver ?? config.planApproval ?? 'lead';
    return approver === 'auto-after' ? `auto-after ${config.planAutoApproveMinutes ?? 30} min` : approver;
  }

  /** True for the lead, and for a teammate whose loop runs (spawned, not shut down or failed). */
  isLive(name: string): boolean {
    if (name === LEAD_NAME) return true;
    const teammate = this.#team.teammate(name);
    if (teammate) return !teammate.finished;
    // A teammate another process of the team runs (a worker on PostgreSQL) and is not done.
    const member = this.#team.ctx.roster.get(name);
    return member !== undefined && member.status !== 'shutdown' && member.status !== 'failed' && this.#team.runsElsewhere(name);
  }

  /** The board; a task whose verify command ran in this session carries `verify_result` (its last run). */
  async tasks(): Promise<Array<Task & { verify_result?: VerifyMark }>> {
    const tasks = await this.#team.ctx.board.list();
    return tasks.map((task) => {
      const mark = this.#verified.get(task.id);
      return mark ? { ...task, verify_result: mark } : task;
    });
  }

  /** The board changed, or a task's verify command ran. */
  onTasksChanged(listener: () => void): () => void {
    const off = this.#team.ctx.board.onChange(listener);
    this.#verifyListeners.add(listener);
    return () => {
      off();
      this.#verifyListeners.delete(listener);
    };
  }

  /** The merged settings (notifications, …); undefined for a session opened from a bare config. */
  get settings(): Settings | undefined {
    return this.#loaded?.settings;
  }

  /** `/config`: every effective setting, its value, and where it came from. */
  /** The workspace's settings files that widen trust: trusted, and waiting for the person (docs/trust.md). */
  settingsTrust(): { trusted: UntrustedFile[]; untrusted: UntrustedFile[] } {
    return { trusted: this.#loaded?.trusted ?? [], untrusted: this.#loaded?.untrusted ?? [] };
  }

  /** Puts a question of the session's own to the person (the needs-you queue), e.g. whether to trust a settings file. */
  askPerson(request: Omit<ApprovalRequest, 'id' | 'created_at'>, signal?: AbortSignal): Promise<ApprovalOutcome> {
    return this.#team.approvals.request(request, signal);
  }

  settingsRows(): SettingsRow[] {
    return this.#loaded ? settingsRows(this.#loaded) : [];
  }

  /** `/mcp`: the MCP servers, their state and tools. */
  mcpStatus(): McpServerStatus[] {
    return this.#mcp?.status() ?? [];
  }

  /** Runs the Notification hooks for something that needs the person (the notifier calls this). */
  notificationHook(agent: string, notification: { message: string; title?: string; notification_type?: string }): Promise<void> {
    return this.#team.notificationHook(agent, notification);
  }

  /** Calls `listener` each time the lead ends a turn with the team settled (nothing left to do): the team finished. */
  onTeamFinished(listener: (leadText: string) => void): () => void {
    return this.#team.lead.onTurnEnd((turn) => {
      if (turn.outcome.kind !== 'end_turn') return;
      void this.#team.isSettled().then((settled) => {
        if (settled) listener(turn.outcome.kind === 'end_turn' ? turn.outcome.text : '');
      });
    });
  }

  /** What waits for the person (tool calls in ask mode, budget stops, plans, notices), oldest first. */
  waitingForPerson(): ApprovalRequest[] {
    return this.#team.approvals.list();
  }

  /** A person is here to answer the needs-you queue (the console): ask mode can put questions to them. */
  attachPerson(): () => void {
    return this.#team.approvals.attachAnswerer();
  }

  /** A headless run's control socket answers plans for the person (huddle approve); nothing else waits headless. */
  attachPlanAnswerer(): () => void {
    return this.#team.approvals.attachAnswerer(['plan']);
  }

  /** The person rewrote a waiting plan (the console's editor) without deciding it yet: an auto-approval's wait starts over. */
  revisePlan(id: string, text: string): boolean {
    return this.#team.approvals.revise(id, text);
  }

  /** What a headless run's first stream-json line says: where, which model, which tools, which mode. */
  describeLead(): { cwd: string; model: string; tools: string[]; permissionMode: string; apiKeySource: string | undefined } {
    return {
      cwd: this.workspace.root,
      model: this.#team.lead.loop.model,
      tools: this.#team.lead.loop.tools.names,
      permissionMode: this.#config.permissionMode ?? 'auto',
      apiKeySource: this.#config.apiKeySource,
    };
  }

  /** Where the model is reached and with which credentials (their source only, never the key), and the permission mode: /config's first lines. */
  describeConnection(): { baseURL: string | undefined; keySource: HuddleConfig['apiKeySource']; keyFile: string | undefined; permissionMode: string } {
    return {
      baseURL: this.#config.baseURL,
      keySource: this.#config.apiKeySource,
      keyFile: this.#config.apiKeyFile,
      // As the permission gate decides it: unset, ask while a person can answer (the console), else auto.
      permissionMode: this.#config.permissionMode ?? (this.#team.approvals.answerable ? 'ask (the console default)' : 'auto'),
    };
  }

  /** The lead's last text and how its last turn ended: what a headless run prints. */
  leadResult(): { text: string; outcome: TurnOutcome | undefined } {
    return { text: this.#team.lead.lastText, outcome: this.#team.lead.lastOutcome };
  }

  /** How an agent stands now: its spend, how full its context is, whether it is in a turn. */
  agentState(name: string): { costUsd: number; contextTokens: number; inTurn: boolean } | undefined {
    const agent = this.#team.agent(name);
    if (!agent) return undefined;
    const { costUsd, contextTokens } = agent.loop.totals;
    return { costUsd, contextTokens, inTurn: agent.loop.running };
  }

  /** Spend per agent (the lead first), from the agents' own totals. */
  spend(): AgentSpend[] {
    return this.#agentsEver().map(({ name, loop }) => ({ name, costUsd: loop.totals.costUsd, modelCalls: loop.totals.modelCalls }));
  }

  /** The team's spend ledger (`.team/spend.jsonl`, or `huddle_spend` on PostgreSQL): every run's, every host's. */
  async spendLedger(): Promise<SpendFile> {
    await this.#store.spend.flush();
    return this.#store.spend.data;
  }

  /** The usage fields of a `done` event: per agent and in all. */
  usageSummary(): Pick<EventFields['done'], 'usage' | 'agents'> {
    const agents: EventFields['done']['agents'] = {};
    let usage = emptyUsage();
    let cost = 0;
    for (const { name, loop } of this.#agentsEver()) {
      const totals = loop.totals;
      agents[name] = { ...totals.usage, cost_usd: totals.costUsd, model_calls: totals.modelCalls };
      usage = addUsage(usage, totals.usage);
      cost += totals.costUsd;
    }
    return { usage: { ...usage, cost_usd: cost }, agents };
  }

  /** /cost: spend per task, from the spend ledger (empty when nothing is tallied). */
  taskSpendLines(): string[] {
    return this.#team.spend.taskLines();
  }

  // ---- intents --------------------------------------------------------------------------------

  /**
   * A prompt for the lead from the person: between turns it starts the next turn; mid-turn it
   * enters before the lead's next model call.
   */
  prompt(text: string): void {
    this.#team.lead.prompt(text);
  }

  /** A message to an agent through the bus (delivered exactly once, mid-turn or by waking it). */
  send(to: string, text: string, from: string = PERSON_SENDER): Promise<Message> {
    return this.#team.bus.send({ type: 'message', from, to, content: text });
  }

  /** One message to every live member (not those shut down or failed: nobody would read it); returns how many got it. */
  async broadcast(text: string, from: string = PERSON_SENDER): Promise<number> {
    const gone = this.#team.ctx.roster
      .members()
      .map((member) => member.name)
      .filter((name) => !this.isLive(name));
    return (await this.#team.bus.broadcast(from, text, gone)).length;
  }

  /**
   * Interrupts `name`'s turn (its model call or tool): here, or (a team on PostgreSQL) by asking the host that runs it.
   * False when it is in no turn here and runs nowhere else.
   */
  interrupt(name: string): boolean {
    const agent = this.#team.agent(name);
    if (agent?.loop.running) {
      agent.interrupt();
      return true;
    }
    const host = this.#team.ctx.roster.get(name)?.host;
    if (agent || !this.#store.remote || !this.#team.runsElsewhere(name) || typeof host !== 'string') return false;
    this.#store.remote
      .interrupt(name, host)
      .catch((error: Error) => this.hub.emit('huddle', 'warning', { message: `could not ask ${name}'s host to interrupt it: ${error.message}` }));
    return true;
  }

  /** A worker: interrupts the agents here that another process of the team asks it to; `told` hears whether it did. */
  serveRemoteInterrupts(told: (name: string, done: boolean) => void = () => undefined): () => void {
    return this.#store.remote?.onInterrupt((name) => told(name, this.#team.agent(name) !== undefined && this.interrupt(name))) ?? (() => undefined);
  }

  /**
   * A teammate tool that needs the live team (idle, shutdown_response, plan_approval with a plan),
   * run as teammate `as`: how an external agent's calls through huddle's MCP server reach its
   * lifecycle. The result is the tool's text; a refusal is `{isError}` like any tool result.
   */
  async runTeammateTool(as: string, tool: string, input: unknown): Promise<{ content: string; isError?: boolean }> {
    const teammate = this.#team.teammate(as);
    if (!teammate || teammate.finished) throw new Error(`no running teammate named '${as}' in this huddle`);
    const registry = new ToolRegistry([...teammateTools(this.#team), planSubmissionTool(this.#team)]);
    if (!registry.has(tool)) throw new Error(`'${tool}' is not a teammate tool of the live team (${registry.names.join(', ')})`);
    const workspace = this.#team.ctx.workspace;
    return registry.run(tool, input, { workspace, agent: as, signal: new AbortController().signal, events: agentEmitter(this.hub, as) });
  }

  /** The screen of a teammate that is a program in a terminal (a `command` agent, a shell pane). */
  terminal(name: string): TerminalView | undefined {
    const teammate = this.#team.teammate(name);
    return teammate && isExternal(teammate) && !teammate.finished ? teammate.terminal : undefined;
  }

  /**
   * A shell pane (`/shell`, `!cmd`): the person's shell as a `command` teammate. With `command`,
   * it is typed into the shell that is open (delivered through the bus like any message, so it
   * arrives once the shell waits for input), or into a new one.
   */
  async shell(command?: string): Promise<{ name: string; message: string }> {
    const open = [...this.#team.teammates.values()].find((t) => isExternal(t) && t.kind === 'command' && t.role === SHELL_ROLE && !t.finished);
    if (open) {
      if (command) await this.send(open.name, command);
      return { name: open.name, message: command ? `sent to ${open.name}` : `${open.name} is open` };
    }
    let name = SHELL_ROLE;
    for (let n = 2; this.#team.teammate(name) && !this.#team.teammate(name)!.finished; n++) name = `${SHELL_ROLE}${n}`;
    const message = await this.#team.spawn(
      { name, role: SHELL_ROLE, prompt: command ?? '', agent: 'command', command: process.env.SHELL || '/bin/sh' },
      PERSON_SENDER,
    );
    return { name, message: message.split('\n')[0]! };
  }

  // ---- a backlog run (session/backlog-run.ts) ----------------------------------------------------

  /** What a backlog run drives: the board, the bus, spawning teammates in worktrees, the lead's shipping tool. */
  backlogParts(): BacklogParts {
    const team = this.#team;
    return {
      board: this.#store.board,
      bus: team.bus,
      spawn: (request) => team.spawn(request, LEAD_NAME),
      enableShipping: (ship) => team.enableShipping(ship),
      hold: () => team.hold(),
      planPending: (name) => team.teammates.get(name)?.planPending === true,
      planApprover: (role) => this.planApprover(role),
    };
  }

  /**
   * How commands huddle runs for the team in a checkout an agent wrote (verify commands) are started:
   * the sandbox's spawn, confined to that checkout (docs/trust.md); undefined only when the sandbox is off.
   */
  sandboxSpawn(): SpawnLike | undefined {
    return this.#team.ctx.spawn;
  }

  /** A best-of-N run (session/best-of-run.ts): the teammate it names gets best_of_verdict when spawned; undefined ends it. */
  enableVerdicts(receiver: VerdictReceiver | undefined): void {
    this.#team.enableVerdicts(receiver);
  }

  /** Starts a teammate as the person (`by` the lead: as its spawn_teammate tool); `more`: its agent, model, worktree… */
  spawn(name: string, role: string, prompt: string, by: string = PERSON_SENDER, more: Omit<SpawnRequest, 'name' | 'role' | 'prompt'> = {}): Promise<string> {
    return this.#team.spawn({ ...more, name, role, prompt }, by);
  }

  /** A task on the board, created by the person (anyone on the team may create one: docs/trust.md). */
  createTask(input: CreateTaskInput, by: string = PERSON_SENDER): Promise<Task> {
    return this.#team.ctx.board.create(input, by);
  }

  /**
   * A member an earlier process left on the roster unfinished (working, idle) that runs nowhere now: marked
   * shut down, so its name can be spawned again (a workflow's step run again). False when there is no such member.
   */
  async retireStale(name: string, reason: string): Promise<boolean> {
    const member = this.#team.ctx.roster.get(name);
    if (name === LEAD_NAME || !member || member.status === 'shutdown' || member.status === 'failed' || this.isLive(name)) return false;
    await this.#team.ctx.roster.setStatus(name, 'shutdown', { reason });
    return true;
  }

  /** Changes a task as `by`, under the board's authority rules (a workflow runs its steps as the lead). */
  updateTask(id: number, patch: UpdateTaskInput, by: string = PERSON_SENDER): Promise<Task> {
    return this.#team.ctx.board.update(id, patch, by);
  }

  /**
   * Asks a teammate to shut down (the protocol), or with `now` stops it at once: here, or (a team on
   * PostgreSQL) by asking its worker, which resolves once the worker's slot is free again.
   */
  async shutdown(name: string, options: { now: boolean; reason?: string }): Promise<string> {
    if (options.now) {
      const reason = options.reason ?? 'stopped by the person';
      const teammate = this.#team.teammate(name);
      if ((!teammate || teammate.finished) && this.#store.hosts && this.#team.runsElsewhere(name)) {
        const stopped = await this.#store.hosts.stop(name, reason);
        if (stopped === 'stopped') return `stopped ${name} on its worker`;
        if (stopped === 'asked') return `asked ${name}'s worker to stop it; it has not yet (its slot stays taken until it does)`;
        if (stopped === 'cancelled') {
          // Its worker never took it, so nothing there will say it ended: the roster says so here.
          await this.#team.ctx.roster.setStatus(name, 'shutdown', { reason });
          return `stopped ${name} before its worker started it`;
        }
      }
      if (!teammate || teammate.finished) throw new Error(`no running teammate named '${name}'`);
      teammate.stopNow(reason);
      return `stopping ${name}`;
    }
    const requestId = await this.#team.requestShutdown(name, PERSON_SENDER);
    return `asked ${name} to shut down (${requestId})`;
  }

  /** Resolves once a teammate of this process stopped (at once for one that runs elsewhere or not at all). */
  async untilStopped(name: string): Promise<void> {
    await this.#team.teammate(name)?.done;
  }

  /** A fresh loop for the agent, keeping its workspace, tasks and a summary (agents/lifecycle/restart.ts). */
  restart(name: string): Promise<RestartResult> {
    return this.#team.restart(name);
  }

  /** Summarises an agent's context: now between turns, else before its next model call. */
  async compact(name: string, focus?: string): Promise<CompactOutcome> {
    const agent = this.#team.agent(name);
    if (!agent) throw new Error(`no agent named '${name}'`);
    if (!this.isLive(name)) throw new Error(`${name} has stopped; nothing to compact`);
    const { deferred, done } = agent.compact(focus || undefined);
    if (deferred) return { deferred: true };
    return { deferred: false, result: await done };
  }

  /** Forgets an agent's conversation (its log keeps it); not while it is in a turn. */
  clear(name: string): boolean {
    return this.#team.agent(name)?.clear() ?? false;
  }

  /** The lead's model from its next call, and the default of teammates spawned from now on. */
  setModel(model: string): void {
    this.#team.setModel(model);
  }

  /** The run's permission mode from now on (agents with a mode of their own keep it). */
  setPermissionMode(mode: PermissionMode): void {
    this.#config.permissionMode = mode;
  }

  /** The person's answer to a request in the needs-you queue; returns what happened, in one line. */
  answer(id: string, decision: ApprovalDecision, reason?: string, edited?: string): string {
    const approvals = this.#team.approvals;
    const request = approvals.list().find((r) => r.id === id);
    if (!request || !approvals.resolve(id, decision, PERSON_SENDER, reason || undefined, decision === 'deny' ? undefined : edited))
      return 'that request is no longer waiting';
    if (request.kind === 'notice') {
      // A failure or a stall: 1 restarts (restart.ts says how it goes), 3 leaves it as it is.
      return decision === 'deny' ? `dismissed; /restart ${request.agent} restarts it later` : `restarting ${request.agent}…`;
    }
    if (decision !== 'deny' && edited !== undefined) return `approved with your edits: ${request.agent}'s plan`;
    if (decision === 'deny') return `denied: ${request.summary}${reason ? ` (told ${request.agent}: ${reason})` : ''}`;
    if (decision === 'always') {
      return request.prefixes.length
        ? `approved; ${request.prefixes.map((p) => `'${p}'`).join(', ')} added to .team/settings.local.json`
        : `approved once: a write to ${request.summary} cannot be allow-listed`;
    }
    return `approved: ${request.summary}`;
  }

  /** The lead and every teammate of this session (finished ones too): whose spend counts. */
  #agentsEver() {
    return [this.#team.lead, ...this.#team.teammates.values()];
  }
}

/** An external agent's teammate (its code is loaded only once one is spawned, so no instanceof here). */
function isExternal(teammate: Teammate): teammate is ExternalTeammate {
  return 'terminal' in teammate;
}
