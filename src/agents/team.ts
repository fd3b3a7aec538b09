// The team: the lead, the teammates it spawns, the shared bus, board and roster, and the
// protocols between them. Headless runs and the console drive the same Team.
import path from 'node:path';
import { MessageBus } from '../runtime/bus.js';
import { TaskBoard } from '../runtime/board.js';
import type { HuddleConfig } from '../runtime/config.js';
import type { EventHub } from '../runtime/events.js';
import type { ModelBackend } from '../runtime/model-client.js';
import { Roster } from '../runtime/roster.js';
import { ApprovalQueue } from '../runtime/approvals.js';
import { teammateMode } from '../runtime/permission-mode.js';
import { guardTools, PermissionGate } from '../runtime/tools/guarded-tools.js';
import { coreTools } from '../runtime/tools/core-tools.js';
import { messageTools } from '../runtime/tools/message-tools.js';
import { ToolRegistry } from '../runtime/tools/registry.js';
import { taskTools } from '../runtime/tools/task-tools.js';
import type { Tool } from '../runtime/tools/types.js';
import type { Workspace } from '../runtime/workspace.js';
import { ensureWorktree, hasWorktree } from '../runtime/worktree.js';
import { Lead } from './lead.js';
import { LEAD_NAME, leadSystemPrompt, teammateSystemPrompt } from './prompts.js';
import { Protocols } from './protocols.js';
import { isReviewerRole, REVIEW_TOOL_NAMES, reviewTools } from './review-tools.js';
import { loadRoles } from './roles.js';
import type { TeamContext } from './team-context.js';
import { leadTools, planSubmissionTool, readOnlyBashTool, teammateTools, type SpawnRequest, type TeamControl } from './team-tools.js';
import { Teammate } from './teammate.js';
import { worktreeInstructions } from './worktree-prompt.js';

export interface TeamOptions {
  config: HuddleConfig;
  workspace: Workspace;
  hub: EventHub;
  backend: ModelBackend;
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
  readonly approvals: ApprovalQueue;
  /** Each agent's permission mode, checked before bash, write_file and edit_file run. */
  readonly permissions: PermissionGate;
  readonly #bus: MessageBus;

  private constructor(ctx: TeamContext) {
    this.ctx = ctx;
    this.#bus = ctx.bus;
    this.approvals = new ApprovalQueue(ctx.hub);
    this.permissions = new PermissionGate({
      teamRoot: ctx.workspace.root,
      teamDir: ctx.workspace.teamDir,
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
    const { config, workspace, hub, backend } = options;
    const roster = await Roster.open(workspace.teamDir, { teamName: path.basename(workspace.root), events: hub });
    const bus = new MessageBus(path.join(workspace.teamDir, 'inbox'), { knownNames: () => roster.names(), events: hub });
    const board = new TaskBoard(workspace.tasksDir, { events: hub });
    return new Team({
      config,
      workspace,
      hub,
      backend,
      bus,
      board,
      roster,
      teamName: roster.teamName,
      shutdownGraceMs: options.shutdownGraceMs ?? 30_000,
      planAutoApproveMs: options.planAutoApproveMs ?? 0,
    });
  }

  get bus(): MessageBus {
    return this.#bus;
  }

  /** Starts the lead's loop: from now on it runs prompts and wakes on its inbox. */
  start(): void {
    this.lead.start();
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

    const allowed = role?.tools ? new Set([...role.tools, 'idle', 'shutdown_response', 'send_message', 'read_inbox']) : undefined;
    // A reviewer is handed reviews whatever its allow-list says; it must be able to decide them.
    if (allowed && isReviewerRole(request.role)) for (const tool of REVIEW_TOOL_NAMES) allowed.add(tool);
    const fullTools = [...this.#sharedTools(), ...teammateTools(this)].filter((tool) => !allowed || allowed.has(tool.name));
    const startTools = planModeRequired
      ? [
          ...fullTools.filter((tool) => READ_ONLY_TOOLS.has(tool.name)),
          readOnlyBashTool(),
          ...teammateTools(this),
          planSubmissionTool(this),
        ]
      : fullTools;
    const identity = { name: request.name, role: request.role, team: this.ctx.teamName };
    const teammate = new Teammate(this.ctx, {
      name: request.name,
      role: request.role,
      model,
      system: teammateSystemPrompt(
        identity,
        worktree?.workspace.root ?? this.ctx.workspace.root,
        [role?.body, worktree && worktreeInstructions(worktree)].filter(Boolean).join('\n\n'),
        LEAD_NAME,
      ),
      workspace: worktree?.workspace,
      tools: new ToolRegistry(startTools),
      fullTools: new ToolRegistry(fullTools),
      prompt: planModeRequired
        ? `${request.prompt}\n\nYou are in plan mode: you can only read until the lead approves your plan. Send it with plan_approval.`
        : request.prompt,
      planModeRequired,
    });
    this.teammates.set(request.name, teammate);
    teammate.start();
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
    return this.protocols.submitPlan(teammate, plan);
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

  async close(reason = 'huddle closed'): Promise<void> {
    this.protocols.close();
    this.approvals.close(reason); // nothing may wait on a person who is gone
    await this.stopAll(reason);
    await this.lead.close();
    this.ctx.board.close();
    this.#bus.close();
  }

  #sharedTools(): Tool[] {
    const messages = messageTools(this.#bus);
    return guardTools([...coreTools(), ...taskTools(this.ctx.board), messages.sendMessage, messages.readInbox, ...reviewTools(this.ctx)], this.permissions);
  }
}
