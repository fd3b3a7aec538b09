// The team: the lead, the teammates it spawns, the shared bus, board and roster, and the
// protocols between them. Headless runs and the console drive the same Team.
import path from 'node:path';
import type { Bus } from '../runtime/store/bus.js';
import type { HuddleConfig } from '../runtime/config.js';
import type { EventHub } from '../runtime/events/events.js';
import type { ModelBackend } from '../runtime/model/model-client.js';
import { type Member } from '../runtime/store/roster.js';
import type { Approvals } from '../runtime/store/approvals.js';
import { Budget, BudgetConfigError, loadBudgetSettings, type BudgetSettings } from '../runtime/budget/budget.js';
import type { SpendLedger } from '../runtime/store/spend-ledger.js';
import { teammateMode } from '../runtime/permissions/permission-mode.js';
import { guardTools, PermissionGate } from '../runtime/permissions/guarded-tools.js';
import { coreTools } from '../runtime/tools/core-tools.js';
import { messageTools } from '../runtime/tools/message-tools.js';
import { ToolRegistry } from '../runtime/tools/registry.js';
import { taskTools } from '../runtime/tools/task-tools.js';
import type { Tool } from '../runtime/tools/types.js';
import type { Workspace } from '../runtime/workspace/workspace.js';
import { ensureWorktree, hasWorktree } from '../runtime/workspace/worktree.js';
import { Lead } from './lead.js';
import { leadSystemPrompt, teammateSystemPrompt } from './prompts.js';
import { LEAD_NAME } from '../runtime/vocabulary.js';
import { Protocols } from './protocols.js';
import { isReviewerRole, REVIEW_TOOL_NAMES, reviewTools } from './review-tools.js';
import { loadRoles } from './roles.js';
import type { TeamContext } from './team-context.js';
import { leadTools, planSubmissionTool, readOnlyBashTool, teammateTools, type SpawnRequest, type TeamControl } from './team-tools.js';
import { Teammate } from './teammate.js';
import { restartAgent, type RestartResult } from './restart.js';
import { needsYouNotices, startTeamWatchdog, type StallWatchdog } from './watchdog.js';
import { worktreeInstructions } from './worktree-prompt.js';
import { appendUserText, replayEvents, resumeTurn } from './transcript-replay.js';
import type { LoggedEvent } from '../runtime/store/event-store.js';
import type { TeamStore } from '../runtime/store/team-store.js';
import { contextWindowFor } from '../runtime/model/context-window.js';
import { formatInbox } from '../runtime/tools/message-tools.js';
import type { RoleDefinition } from './roles.js';
import type { WorktreeInfo } from '../runtime/workspace/worktree.js';
import type { TeammateResume } from './teammate.js';

/** A rebuilt transcript above this share of the context window is compacted rather than replayed whole. */
const RESUME_COMPACT_FRACTION = 0.5;

export interface ResumeReport {
  resumed: Array<{ name: string; events: number; interrupted: number; idle: boolean }>;
  released: Array<{ name: string; tasks: number; reason: string }>;
}

/** What a teammate is started with, on spawn and on resume. */
interface TeammateStart {
  name: string;
  role: string;
  model: string;
  roleDef: RoleDefinition | undefined;
  worktree: WorktreeInfo | undefined;
  planModeRequired: boolean;
}

export interface TeamOptions {
  config: HuddleConfig;
  workspace: Workspace;
  hub: EventHub;
  backend: ModelBackend;
  /** Where the team's shared state lives (the workspace's files, by default). */
  store: TeamStore;
  shutdownGraceMs?: number;
  planAutoApproveMs?: number;
}

/** Tools a plan-mode teammate keeps before approval. */
const READ_ONLY_TOOLS = new Set(['read_file', 'glob', 'grep', 'task_list', 'task_get', 'send_message', 'read_inbox']);

export class Team implements TeamControl {
  readonly ctx: TeamContext;
  readonly lead: Lead;
  readonly teammates = new Map<string, Teammate>();
  readonly protocols: Protocols;
  /** Tool calls waiting for the person (ask mode); the console attaches to answer them. */
  readonly approvals: Approvals;
  /** Each agent's permission mode, checked before bash, write_file and edit_file run. */
  readonly permissions: PermissionGate;
  /** Spend vs limits, asked before every model call; a reached limit waits in `approvals`. */
  readonly budget: Budget;
  /** Spend per agent and per task, kept in .team/spend.json. */
  readonly spend: SpendLedger;
  readonly #bus: Bus;
  /** The stall watchdog (watchdog.ts), from start() to close(). */
  #watchdog: StallWatchdog | undefined;

  readonly store: TeamStore;

  private constructor(ctx: TeamContext, store: TeamStore, budgetSettings?: BudgetSettings) {
    this.ctx = ctx;
    this.store = store;
    this.#bus = ctx.bus;
    this.approvals = store.approvals;
    this.budget = ctx.budget ??= new Budget({ hub: ctx.hub, approvals: this.approvals, ledger: store.spend, roster: ctx.roster, settings: budgetSettings });
    this.spend = store.spend;
    this.permissions = new PermissionGate({
      teamRoot: ctx.workspace.root,
      allowList: store.allowList,
      approvals: this.approvals,
      roster: ctx.roster,
      configuredMode: () => ctx.config.permissionMode,
    });
    this.protocols = new Protocols(
      ctx.bus,
      {
        forceStop: (name, reason) => this.teammates.get(name)?.stopNow(reason),
        stopGracefully: (name, reason) => this.teammates.get(name)?.requestStop(reason),
        grantFullTools: (name) => this.teammates.get(name)?.approvePlan(),
      },
      { shutdownGraceMs: ctx.shutdownGraceMs, planAutoApproveMs: ctx.planAutoApproveMs },
    );
    const identity = { name: LEAD_NAME, role: 'lead', team: ctx.teamName };
    this.lead = new Lead(ctx, {
      name: LEAD_NAME,
      role: 'lead',
      model: ctx.config.model,
      system: leadSystemPrompt(identity, ctx.workspace.root),
      tools: new ToolRegistry([...this.#sharedTools(), ...leadTools(this)]),
    });
  }

  static async open(options: TeamOptions): Promise<Team> {
    const { config, workspace, hub, backend, store } = options;
    const { roster, bus, board } = store;
    let budgetSettings: BudgetSettings | undefined;
    try {
      budgetSettings = loadBudgetSettings(workspace.teamDir, config.budget);
    } catch (error) {
      // The console still opens (fix it and use /budget); headless checks the file first and exits 2.
      if (!(error instanceof BudgetConfigError)) throw error;
      hub.emit('huddle', 'warning', { message: `${error.message}; only the --budget-* flags apply` });
      budgetSettings = loadBudgetSettings(path.join(workspace.teamDir, 'no-budget-file'), config.budget);
    }
    return new Team({
      config,
      workspace,
      hub,
      backend,
      bus,
      board,
      roster,
      transcripts: store.events,
      teamName: roster.teamName,
      shutdownGraceMs: options.shutdownGraceMs ?? 30_000,
      planAutoApproveMs: options.planAutoApproveMs ?? 0,
    }, store, budgetSettings);
  }

  get bus(): Bus {
    return this.#bus;
  }

  /** Starts the lead's loop: from now on it runs prompts and wakes on its inbox. */
  start(): void {
    this.lead.start();
    // Stalls and failures also go to the person's needs-you queue (y restarts, n dismisses).
    this.#watchdog ??= startTeamWatchdog(this, needsYouNotices(this));
  }

  /** /restart: a fresh loop for the agent, keeping its workspace, tasks and a summary (restart.ts). */
  restart(name: string): Promise<RestartResult> {
    return restartAgent(this, name);
  }

  async spawn(request: SpawnRequest, by: string): Promise<string> {
    if (request.name === LEAD_NAME) throw new Error(`'${LEAD_NAME}' is the lead's name; choose another`);
    const existing = this.teammates.get(request.name);
    if (existing && !existing.finished) {
      throw new Error(`a teammate named '${request.name}' is already running; choose another name or shut it down first`);
    }
    const { roles, errors } = loadRoles(this.ctx.workspace.teamDir);
    const role = roles.get(request.role);
    const model = request.model ?? role?.model ?? this.ctx.config.model;
    const planModeRequired = request.planModeRequired ?? role?.plan_mode_required ?? false;
    const permission = teammateMode({ requested: request.permissionMode, role: role?.permission_mode, run: this.permissions.runMode(), byLead: by === LEAD_NAME });
    this.permissions.setMode(request.name, permission.mode);
    // Its own git worktree when asked, or by the role's or the config's default; one left by an
    // earlier spawn of that name is reused, so its work carries on. The team state stays here.
    const wantsWorktree = request.worktree ?? role?.worktree ?? (this.ctx.config.worktrees || hasWorktree(this.ctx.workspace.root, request.name));
    const worktree = wantsWorktree ? await ensureWorktree(this.ctx.workspace.root, request.name) : undefined;
    await this.ctx.roster.add({ name: request.name, role: request.role, model, status: 'working', worktree: worktree?.relativePath });

    this.#startTeammate(
      { name: request.name, role: request.role, model, roleDef: role, worktree, planModeRequired },
      planModeRequired
        ? `${request.prompt}\n\nYou are in plan mode: you can only read until the lead approves your plan. Send it with plan_approval.`
        : request.prompt,
    );
    const notes = [
      role ? undefined : `note: '${request.role}' is not a known role (known: ${[...roles.keys()].join(', ')}); it runs without role instructions`,
      ...errors.map((e) => `note: ${e}`),
      permission.note && `note: ${permission.note}`,
    ].filter(Boolean);
    const where = worktree ? `, ${worktree.created ? 'new' : 'reused'} worktree ${worktree.relativePath} on ${worktree.branch}` : '';
    return [`spawned ${request.name} (${request.role}, ${model}${planModeRequired ? ', plan mode' : ''}${where})`, ...notes].join('\n');
  }

  describeRoster(): string {
    const lines = this.ctx.roster.members().map((m) => {
      const why = m.status_reason ?? m.error;
      return `${m.name} (${m.role}) ${m.status}${why ? `: ${why}` : ''}`;
    });
    return lines.join('\n');
  }

  async broadcast(from: string, content: string): Promise<number> {
    const sent = await this.#bus.broadcast(from, content);
    return sent.length;
  }

  async requestShutdown(teammate: string): Promise<string> {
    const member = this.teammates.get(teammate);
    if (!member) {
      const names = [...this.teammates.keys()];
      throw new Error(`no teammate named '${teammate}'; teammates: ${names.length ? names.join(', ') : 'none'}`);
    }
    if (member.finished) throw new Error(`${teammate} has already stopped`);
    return this.protocols.requestShutdown(teammate);
  }

  answerShutdown(teammate: string, requestId: string, approve: boolean, reason?: string): Promise<void> {
    return this.protocols.answerShutdown(teammate, requestId, approve, reason);
  }

  async submitPlan(teammate: string, plan: string): Promise<string> {
    const member = this.teammates.get(teammate);
    if (!member?.planPending) throw new Error('your plan needs no approval: you already have your full tools');
    member.awaitingPlanDecision = true;
    member.requestIdle();
    const byPerson = this.ctx.config.planApproval === 'person' && this.approvals.answerable;
    const requestId = await this.protocols.submitPlan(teammate, plan, !byPerson);
    if (byPerson) void this.#askPersonAboutPlan(teammate, requestId, plan);
    return requestId;
  }

  /** HUDDLE_PLAN_APPROVAL=person: the plan waits in the needs-you queue; y approves, n rejects. */
  async #askPersonAboutPlan(teammate: string, requestId: string, plan: string): Promise<void> {
    const summary = plan.replace(/\s+/g, ' ').trim();
    const outcome = await this.approvals.request({
      agent: teammate,
      kind: 'plan',
      tool: 'plan',
      summary: summary.length > 200 ? `${summary.slice(0, 199)}…` : summary,
      reason: `y approves ${teammate}'s plan (full text in its pane) · n sends it back to be revised`,
      prefixes: [],
    });
    try {
      if (outcome.kind === 'approved') await this.protocols.decidePlan(requestId, true, 'approved by the person');
      else if (outcome.kind === 'denied') await this.protocols.decidePlan(requestId, false, 'the person did not approve it; revise the plan and send it again');
      // Nobody left to answer (the console closed): the lead decides after all.
      else await this.protocols.askLeadAboutPlan(teammate, requestId, plan);
    } catch {
      // Already decided (auto-approval) or the team is closing: nothing left to do.
    }
  }

  decidePlan(requestId: string, approve: boolean, feedback?: string): Promise<string> {
    return this.protocols.decidePlan(requestId, approve, feedback);
  }

  goIdle(teammate: string): void {
    this.teammates.get(teammate)?.requestIdle();
  }

  /**
   * For a resumed workspace whose teammates cannot come back: each member that was not shut
   * down releases its tasks to the board and is marked shut down. Returns what was released.
   */
  async releaseUnresumable(): Promise<Array<{ name: string; tasks: number }>> {
    const released: Array<{ name: string; tasks: number }> = [];
    for (const member of this.ctx.roster.members()) {
      if (member.name === LEAD_NAME || member.status === 'shutdown' || this.teammates.has(member.name)) continue;
      const tasks = await this.ctx.board.release(member.name);
      await this.ctx.roster.setStatus(member.name, 'shutdown', { reason: 'not resumed' });
      released.push({ name: member.name, tasks: tasks.length });
    }
    return released;
  }

  /**
   * Resume (SPEC sections 1 and 5): the lead and every teammate that was not shut down come back
   * with the conversation rebuilt from their logs (transcript-replay.ts) and one user turn saying
   * so. Each inbox cursor is first re-acked to the last delivery the log recorded, so nothing is
   * delivered twice. Teammates that cannot come back (failed, or their role file no longer loads)
   * release their tasks to the board. Call before start(); the lead's resume turn waits for its
   * next input (the prompt of the resumed run).
   */
  async resumeMembers(): Promise<ResumeReport> {
    const report: ResumeReport = { resumed: [], released: [] };
    const { roles, errors } = loadRoles(this.ctx.workspace.teamDir);
    const logs = new Map<string, LoggedEvent[]>();
    for (const agent of await this.store.events.agents()) logs.set(agent, await this.store.events.read(agent));
    await this.#reconcileTaskLog(logs);
    const lead = await this.#restore(this.lead, logs, 'lead');
    this.#appendTurn(this.lead, lead.turn);
    report.resumed.push({ name: LEAD_NAME, events: lead.events, interrupted: lead.interrupted, idle: true });
    const answered = new Set((await this.#bus.history(LEAD_NAME)).flatMap((m) => (m.type === 'shutdown_response' && m.request_id ? [m.request_id] : [])));
    const members = this.ctx.roster.members().filter((m) => m.name !== LEAD_NAME && m.status !== 'shutdown' && !this.teammates.has(m.name));
    const comeBack: typeof members = [];
    // Those that cannot come back first: the board is settled before anyone resumed looks at it.
    for (const member of members) {
      const roleBroken = !roles.has(member.role) && errors.some((e) => e.includes(`${member.role}.md`));
      if (member.status !== 'failed' && !roleBroken) {
        comeBack.push(member);
        continue;
      }
      const tasks = await this.ctx.board.release(member.name);
      const why = member.status === 'failed' ? `failed earlier${member.error ? ` (${member.error})` : ''}` : `role '${member.role}' cannot be loaded`;
      await this.ctx.roster.setStatus(member.name, 'shutdown', { reason: `not resumed: ${why}` });
      report.released.push({ name: member.name, tasks: tasks.length, reason: why });
    }
    for (const member of comeBack) {
      try {
        report.resumed.push(await this.#resumeTeammate(member, roles.get(member.role), logs, answered));
      } catch (error) {
        // It cannot come back (its worktree cannot be made, say): its tasks go back to the board.
        this.teammates.delete(member.name);
        const tasks = await this.ctx.board.release(member.name);
        const why = error instanceof Error ? error.message : String(error);
        await this.ctx.roster.setStatus(member.name, 'shutdown', { reason: `not resumed: ${why}` });
        report.released.push({ name: member.name, tasks: tasks.length, reason: why });
      }
    }
    return report;
  }

  /** One teammate back as it was: role, model, tools and worktree as on spawn, with its rebuilt transcript. */
  async #resumeTeammate(member: Member, role: RoleDefinition | undefined, logs: Map<string, LoggedEvent[]>, answered: Set<string>): Promise<ResumeReport['resumed'][number]> {
    const permission = teammateMode({ requested: undefined, role: role?.permission_mode, run: this.permissions.runMode(), byLead: true });
    this.permissions.setMode(member.name, permission.mode);
    const worktree = member.worktree ? await ensureWorktree(this.ctx.workspace.root, member.name) : undefined;
    const idle = member.status === 'idle';
    // Its plan, if one was asked for, was decided or is lost with the old process: it resumes with its full tools.
    const start: TeammateStart = { name: member.name, role: member.role, model: member.model ?? role?.model ?? this.ctx.config.model, roleDef: role, worktree, planModeRequired: false };
    const teammate = this.#startTeammate(start, '', { messages: [], idle });
    const restored = await this.#restore(teammate, logs, member.role);
    if (idle) this.#appendTurn(teammate, restored.turn);
    else teammate.prompt = restored.turn;
    await this.#reopenShutdowns(member.name, answered);
    teammate.start();
    return { name: member.name, events: restored.events, interrupted: restored.interrupted, idle };
  }

  /** Puts an agent's rebuilt transcript in place (compacted when large) and says what its resume turn is. */
  async #restore(agent: Lead | Teammate, logs: Map<string, LoggedEvent[]>, role: string): Promise<{ turn: string; events: number; interrupted: number }> {
    const identity = { name: agent.name, role, team: this.ctx.teamName };
    const replayed = replayEvents(logs.get(agent.name) ?? [], identity);
    // The delivery was logged before the ack: make the ack true, whichever happened last.
    if (replayed.deliveredOffset !== undefined) await this.#bus.ack(agent.name, replayed.deliveredOffset);
    agent.loop.messages.splice(0, agent.loop.messages.length, ...replayed.messages);
    if (replayed.tokens > RESUME_COMPACT_FRACTION * contextWindowFor(agent.loop.model)) {
      // Too large to replay whole: the summary replaces it (on failure the loop's own compaction retries).
      await agent.compact().done.catch(() => undefined);
    }
    const tasks = (await this.ctx.board.list()).filter((task) => task.owner === agent.name && task.status !== 'completed');
    const inbox = replayed.undelivered.length ? formatInbox(replayed.undelivered) : undefined;
    const turn = resumeTurn(identity, tasks, { interrupted: replayed.interruptedTools.length, inbox });
    return { turn, events: replayed.events, interrupted: replayed.interruptedTools.length };
  }

  /**
   * A kill between a task file's write and its event leaves the log behind the board: the task's
   * state as it is now is logged, so the logs agree with the board again.
   */
  async #reconcileTaskLog(logs: Map<string, LoggedEvent[]>): Promise<void> {
    const logged = [...logs.values()]
      .flat()
      .filter((e) => e.type === 'task' && e.task && typeof e.task === 'object')
      .sort((a, b) => String(a.ts).localeCompare(String(b.ts)));
    const last = new Map<number, { status?: unknown; owner?: unknown }>();
    for (const event of logged) {
      const task = event.task as { id?: unknown; status?: unknown; owner?: unknown };
      last.set(Number(task.id), task);
    }
    for (const task of await this.ctx.board.list()) {
      const seen = last.get(task.id);
      if (seen?.status === task.status && (seen.owner ?? null) === (task.owner ?? null)) continue;
      this.ctx.hub.emit(LEAD_NAME, 'task', { action: 'reconciled', task });
    }
  }

  /** Shutdown requests to `teammate` not answered before the restart are open again. */
  async #reopenShutdowns(teammate: string, answered: Set<string>): Promise<void> {
    for (const message of await this.#bus.history(teammate)) {
      if (message.type === 'shutdown_request' && message.request_id && !answered.has(message.request_id)) {
        this.protocols.reopenShutdown(teammate, message.request_id);
      }
    }
  }

  /** A user turn added without a model call (logged as a prompt, so a later resume replays it too). */
  #appendTurn(agent: Lead | Teammate, text: string): void {
    agent.events.emit('prompt', { text, source: 'system' });
    appendUserText(agent.loop.messages, text);
  }

  /** Teammates that have not finished (shut down or failed). */
  liveTeammates(): Teammate[] {
    return [...this.teammates.values()].filter((t) => !t.finished);
  }

  /**
   * True when a headless run is over (SPEC section 5): the lead has ended its turn, its inbox
   * is empty, and no teammate is working — nor about to: a resting teammate of this team with an
   * unread message, or with a claimable task on the board, is woken and says `working` before
   * it takes either, so until then it still counts.
   */
  async isSettled(): Promise<boolean> {
    if (!this.lead.isIdle) return false;
    if ((await this.#bus.unreadCount(LEAD_NAME)) > 0) return false;
    const members = this.ctx.roster.members().filter((m) => m.name !== LEAD_NAME);
    if (members.some((m) => m.status === 'working')) return false;
    const resting = members.filter((m) => (m.status === 'idle' || m.status === 'waiting') && this.teammates.get(m.name)?.finished === false);
    for (const member of resting) if ((await this.#bus.unreadCount(member.name)) > 0) return false;
    if (resting.some((m) => m.status === 'idle' && !isReviewerRole(m.role)) && (await this.ctx.board.claimable()).length > 0) return false;
    // Likewise an idle reviewer with a task waiting in review (it takes it next).
    for (const member of resting.filter((m) => m.status === 'idle' && isReviewerRole(m.role))) {
      if ((await this.ctx.board.reviewable(member.name)).length > 0) return false;
    }
    return true;
  }

  /** Stops every live teammate now and waits for their loops to end. */
  async stopAll(reason: string): Promise<void> {
    const live = this.liveTeammates();
    for (const teammate of live) teammate.stopNow(reason);
    await Promise.all(live.map((t) => t.done));
  }

  /** Stops every agent; the store stays open (its owner, the session, closes it after the last event). */
  async close(reason = 'huddle closed'): Promise<void> {
    this.#watchdog?.stop();
    this.protocols.close();
    this.approvals.close(reason); // nothing may wait on a person who is gone
    await this.stopAll(reason);
    await this.lead.close();
    this.budget.close();
    await this.spend.flush();
  }

  /** A teammate's tools, prompt and loop, as on spawn; a resumed one starts from its rebuilt transcript. */
  #startTeammate(spec: TeammateStart, prompt: string, resume?: TeammateResume): Teammate {
    const allowed = spec.roleDef?.tools ? new Set([...spec.roleDef.tools, 'idle', 'shutdown_response', 'send_message', 'read_inbox']) : undefined;
    // A reviewer is handed reviews whatever its allow-list says; it must be able to decide them.
    if (allowed && isReviewerRole(spec.role)) for (const tool of REVIEW_TOOL_NAMES) allowed.add(tool);
    const fullTools = [...this.#sharedTools(), ...teammateTools(this)].filter((tool) => !allowed || allowed.has(tool.name));
    const startTools = spec.planModeRequired
      ? [
          ...fullTools.filter((tool) => READ_ONLY_TOOLS.has(tool.name)),
          readOnlyBashTool(),
          ...teammateTools(this),
          planSubmissionTool(this),
        ]
      : fullTools;
    const identity = { name: spec.name, role: spec.role, team: this.ctx.teamName };
    const teammate = new Teammate(this.ctx, {
      name: spec.name,
      role: spec.role,
      model: spec.model,
      system: teammateSystemPrompt(
        identity,
        spec.worktree?.workspace.root ?? this.ctx.workspace.root,
        [spec.roleDef?.body, spec.worktree && worktreeInstructions(spec.worktree)].filter(Boolean).join('\n\n'),
        LEAD_NAME,
      ),
      workspace: spec.worktree?.workspace,
      tools: new ToolRegistry(startTools),
      fullTools: new ToolRegistry(fullTools),
      prompt,
      planModeRequired: spec.planModeRequired,
      resume,
    });
    this.teammates.set(spec.name, teammate);
    // A resumed teammate starts once its transcript is in place (and compacted if too large).
    if (!resume) teammate.start();
    return teammate;
  }

  #sharedTools(): Tool[] {
    const messages = messageTools(this.#bus);
    return guardTools([...coreTools(), ...taskTools(this.ctx.board), messages.sendMessage, messages.readInbox, ...reviewTools(this.ctx)], this.permissions);
  }
}
