// The team: the lead, the teammates it spawns, the shared stores and the protocols between them,
// and their lifecycles (start, spawn, stop, suspend, close). Around it, one concern a file:
// team-tools.ts assembles each agent's tools, resume.ts brings a crashed team back, restart.ts
// gives one agent a fresh loop, watchdog.ts supervises. The session core (src/session) opens a
// Team; the faces (console, headless, …) talk to the session, never to the Team.
import path from 'node:path';
import type { Bus } from '../../runtime/store/bus.js';
import type { HuddleConfig } from '../../runtime/config.js';
import type { AllowList } from '../../runtime/store/allow-list.js';
import type { EventHub } from '../../runtime/events/events.js';
import { ModelClient, type ModelBackend } from '../../runtime/model/model-client.js';
import { resolveModelAlias } from '../../runtime/model/model-aliases.js';
import type { SystemPrompt } from '../../runtime/model/system-prompt.js';
import type { Approvals } from '../../runtime/store/approvals.js';
import type { EventStore } from '../../runtime/store/event-store.js';
import { Budget, BudgetConfigError, loadBudgetSettings, type BudgetSettings } from '../../runtime/budget/budget.js';
import type { SpendLedger } from '../../runtime/store/spend-ledger.js';
import type { TeamStore } from '../../runtime/store/team-store.js';
import { teammateMode } from '../../runtime/permissions/permission-mode.js';
import { PermissionGate } from '../../runtime/permissions/permission-gate.js';
import { sandboxStatus, type SandboxStatus } from '../../runtime/sandbox/status.js';
import type { Workspace } from '../../runtime/workspace/workspace.js';
import { ToolRegistry } from '../../runtime/tools/registry.js';
import { ensureWorktree, hasWorktree } from '../../runtime/workspace/worktree.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import type { HookRunner } from '../../runtime/hooks/hook-runner.js';
import type { SpawnLike } from '../../runtime/process/spawn.js';
import { roleSettings, type RoleSettings } from '../../runtime/settings/role-settings.js';
import type { Settings } from '../../runtime/settings/schema.js';
import { agentEmitter } from '../../runtime/events/events.js';
import type { Agent } from '../loop/agent.js';
import type { McpToolSource } from '../tools/mcp-tools.js';
import type { ProjectMemory } from '../prompts/memory.js';
import { TeamHooks } from '../tools/team-hooks.js';
import { Lead } from './lead.js';
import { askPersonAboutPlan } from './plan-by-person.js';
import { identityLine, leadSystemPrompt, teammateSystemPrompt } from '../prompts/prompts.js';
import { Protocols } from './protocols.js';
import { restartAgent, type RestartHost, type RestartResult } from './restart.js';
import { resumeTeam, type ResumeHost, type ResumeReport } from './resume.js';
import { isReviewerRole } from '../tools/review-tools.js';
import { loadRoles } from './roles.js';
import type { Shipper, TeamContext, VerdictReceiver } from '../team-context.js';
import { leadShipTools, leadToolset, teammateToolsets, type SpawnRequest, type TeamControl } from '../tools/team-tools.js';
import { Teammate, type TeammateResume, type TeammateStart } from './teammate.js';
import { placeOnWorker } from './placement.js';
import { needsYouNotices, startTeamWatchdog, type NoticeHost, type StallWatchdog, type WatchedTeam } from './watchdog.js';
import { worktreeInstructions } from '../prompts/worktree-prompt.js';
import { resolveLaunch } from '../external/launch.js';
import { settingsCommandFiles } from '../../runtime/settings/command-files.js';

export type { ResumeReport } from './resume.js';

export interface TeamOptions {
  config: HuddleConfig;
  workspace: Workspace;
  hub: EventHub;
  backend: ModelBackend;
  /** Where the team's shared state lives (the workspace's files, by default). */
  store: TeamStore;
  shutdownGraceMs?: number;
  /**
   * What the settings add (docs/contract.md#settings-files); a team opened without them (tests) reads .team/budget.json
   * itself and has no role overrides, verify gates, hooks, MCP tools or project instructions.
   */
  settings?: Settings;
  /** The budgets from the settings (budgetSettingsFrom); else .team/budget.json and the config's team limits. */
  budget?: BudgetSettings;
  memory?: ProjectMemory;
  hooks?: HookRunner;
  mcp?: McpToolSource;
  spawn?: SpawnLike;
}

export class Team implements TeamControl, ResumeHost, RestartHost, WatchedTeam, NoticeHost {
  readonly ctx: TeamContext;
  readonly lead: Lead;
  readonly teammates = new Map<string, Teammate>();
  readonly protocols: Protocols;
  /** Tool calls waiting for the person (ask mode); the console attaches to answer them. */
  readonly approvals: Approvals;
  /** Each agent's permission mode, checked before bash, write_file and edit_file run. */
  readonly permissions: PermissionGate;
  /** Whether agents' commands run sandboxed, read once as the team opens; every tool call carries it. */
  readonly sandbox: SandboxStatus = sandboxStatus();
  /** Spend vs limits, asked before every model call; a reached limit waits in `approvals`. */
  readonly budget: Budget;
  /** Spend per agent and per task, kept in .team/spend.jsonl. */
  readonly spend: SpendLedger;
  readonly store: TeamStore;
  /** The stall watchdog (watchdog.ts), from start() to close(). */
  #watchdog: StallWatchdog | undefined;
  /** Stops telling the person about the team's back-offs (call-governor.ts). */
  readonly #unwatchBackoff: () => void;
  /** Why the team is stopping (suspend, stopAll or close began): spawns are refused from then on. */
  #closing: string | undefined;
  /** Spawns under way, which a stop waits for before it lists the live teammates. */
  readonly #spawning = new Set<Promise<string>>();

  private constructor(ctx: TeamContext, store: TeamStore, budgetSettings?: BudgetSettings, hookRunner?: HookRunner) {
    this.ctx = ctx;
    this.store = store;
    this.approvals = store.approvals;
    this.budget = ctx.budget ??= new Budget({ hub: ctx.hub, approvals: this.approvals, ledger: store.spend, roster: ctx.roster, settings: budgetSettings });
    this.spend = store.spend;
    // A 429 or 529 pauses every agent's calls (call-governor.ts): the person hears it once, and
    // each waiting agent's status reason says so (which is what the lead sees of its teammates).
    const governor = ctx.backend instanceof ModelClient ? ctx.backend.governor : undefined;
    this.#unwatchBackoff =
      governor?.onBackoff(({ delayMs, reason }) =>
        ctx.hub.emit('huddle', 'warning', {
          message: `${reason}: every agent's model calls wait ${(delayMs / 1000).toFixed(1)} s (team back-off)`,
          backoff_ms: delayMs,
        }),
      ) ?? (() => undefined);
    this.permissions = new PermissionGate({
      teamRoot: ctx.workspace.root,
      allowList: withRunPrefixes(store.allowList, ctx.config.allowedCommands),
      approvals: this.approvals,
      roster: ctx.roster,
      configuredMode: () => ctx.config.permissionMode,
      configFiles: (root) => settingsCommandFiles(root, ctx.settings),
      toolRules: () => ctx.settings?.permissions ?? {},
    });
    if (hookRunner) ctx.hooks = new TeamHooks(hookRunner, (agent) => this.permissions.modeOf(agent));
    this.protocols = new Protocols(
      ctx.bus,
      {
        forceStop: (name, reason) => this.teammates.get(name)?.stopNow(reason),
        stopGracefully: (name, reason) => this.teammates.get(name)?.requestStop(reason),
        grantFullTools: (name) => {
          this.teammates.get(name)?.approvePlan();
          // The roster remembers it (a resume gives full tools only to an approved plan). Not written, a resume
          // asks for the plan again: the cautious side.
          this.ctx.roster.update(name, { plan_mode: 'approved' }).catch(() => undefined);
        },
      },
      { shutdownGraceMs: ctx.shutdownGraceMs },
    );
    const identity = { name: LEAD_NAME, role: 'lead', team: ctx.teamName };
    const leadSettings = this.roleSettings('lead');
    this.lead = new Lead(ctx, {
      name: LEAD_NAME,
      role: 'lead',
      model: resolveModelAlias(leadSettings.model ?? ctx.config.model),
      system: withCallerInstructions(leadSystemPrompt(identity, ctx.workspace.root), identityLine(identity), ctx.config.leadInstructions),
      tools: leadToolset(this, this),
      maxTurns: leadSettings.maxTurns,
    });
  }

  readonly #holds = new Set<symbol>();

  /**
   * Work outside the agents the team waits for (a pull request's checks): the team has not settled
   * until the returned release is called. Whoever holds it wakes an agent when it ends, so the run's
   * end is looked at again.
   */
  hold(): () => void {
    const token = Symbol('hold');
    this.#holds.add(token);
    return () => void this.#holds.delete(token);
  }

  /** A backlog run: the lead gets open_pull_request, which `ship` carries out in huddle's process. */
  enableShipping(ship: Shipper): void {
    this.ctx.ship = ship;
    for (const tool of leadShipTools(ship, this)) this.lead.loop.tools.add(tool);
  }

  /** A best-of-N run: its reviewer (`receiver.accepts`) gets best_of_verdict when it is spawned. */
  enableVerdicts(receiver: VerdictReceiver | undefined): void {
    this.ctx.verdicts = receiver;
  }

  /** What the settings say about a role (`roles.<role>`, its verify command); nothing without settings. */
  roleSettings(role: string): RoleSettings {
    return this.ctx.settings ? roleSettings(this.ctx.settings, role) : {};
  }

  static async open(options: TeamOptions): Promise<Team> {
    const { config, workspace, hub, backend, store } = options;
    const { roster, bus, board } = store;
    let budgetSettings = options.budget;
    if (!budgetSettings) {
      try {
        budgetSettings = loadBudgetSettings(workspace.teamDir, config.budget);
      } catch (error) {
        // A team opened without settings (tests): a broken file is a warning, and the flags apply.
        if (!(error instanceof BudgetConfigError)) throw error;
        hub.emit('huddle', 'warning', { message: `${error.message}; only the --budget-* flags apply` });
        budgetSettings = loadBudgetSettings(path.join(workspace.teamDir, 'no-budget-file'), config.budget);
      }
    }
    const ctx: TeamContext = {
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
      settings: options.settings,
      memory: options.memory,
      mcp: options.mcp,
      spawn: options.spawn,
    };
    return new Team(ctx, store, budgetSettings, options.hooks);
  }

  /** The session's hooks, if any are configured. */
  get hooks(): TeamHooks | undefined {
    return this.ctx.hooks;
  }

  /**
   * SessionStart (`startup`, `resume`) or SessionEnd hooks, run as the lead in the workspace. What a
   * SessionStart hook prints (or says as additionalContext) goes into the lead's system prompt.
   */
  async sessionHook(
    input: { hook_event_name: 'SessionStart'; source: 'startup' | 'resume' } | { hook_event_name: 'SessionEnd'; reason: string },
  ): Promise<void> {
    const hooks = this.ctx.hooks;
    if (!hooks?.has(input.hook_event_name)) return;
    const event = input.hook_event_name === 'SessionStart' ? { ...input, model: this.lead.loop.model } : input;
    const outcome = await hooks.run(this.lead.events, event, { cwd: this.ctx.workspace.root });
    if (input.hook_event_name === 'SessionStart' && outcome.additionalContext) this.ctx.sessionContext = outcome.additionalContext;
  }

  /** The Notification hooks for something that needs the person (runtime/notify calls this). */
  async notificationHook(agent: string, notification: { message: string; title?: string; notification_type?: string }): Promise<void> {
    const hooks = this.ctx.hooks;
    if (!hooks?.has('Notification')) return;
    const emitter = this.agent(agent)?.events ?? agentEmitter(this.ctx.hub, agent);
    await hooks.run(emitter, { hook_event_name: 'Notification', ...notification }, { cwd: this.ctx.workspace.root });
  }

  get bus(): Bus {
    return this.ctx.bus;
  }

  /** The event record the team's logs are read back from (resume). */
  get eventLog(): EventStore {
    return this.store.events;
  }

  /** Starts the lead's loop: from now on it runs prompts and wakes on its inbox. */
  start(): void {
    this.lead.start();
    // Stalls and failures also go to the person's needs-you queue (y restarts, n dismisses).
    this.#watchdog ??= startTeamWatchdog(this, needsYouNotices(this));
  }

  /** Brings back the team left in the workspace (resume.ts); before start(). */
  resumeMembers(): Promise<ResumeReport> {
    return resumeTeam(this);
  }

  /** /restart: a fresh loop for the agent, keeping its workspace, tasks and a summary (restart.ts). */
  restart(name: string): Promise<RestartResult> {
    return restartAgent(this, name);
  }

  // ---- members ------------------------------------------------------------------------------

  /** The lead or a teammate (finished or not), by name. */
  agent(name: string): Agent | undefined {
    return name === LEAD_NAME ? this.lead : this.teammates.get(name);
  }

  /** The lead and the teammates that have not finished. */
  agents(): Agent[] {
    return [this.lead, ...this.liveTeammates()];
  }

  teammate(name: string): Teammate | undefined {
    return this.teammates.get(name);
  }

  teammateNames(): string[] {
    return [...this.teammates.keys()];
  }

  hasTeammate(name: string): boolean {
    return this.teammates.has(name);
  }

  replaceTeammate(name: string, teammate: Teammate): void {
    this.teammates.set(name, teammate);
  }

  forgetTeammate(name: string): void {
    this.teammates.delete(name);
  }

  /** Teammates that have not finished (shut down or failed). */
  liveTeammates(): Teammate[] {
    return [...this.teammates.values()].filter((t) => !t.finished);
  }

  /** /model: the lead's model from its next call, and the default of teammates spawned from now on. */
  setModel(name: string): void {
    const model = resolveModelAlias(name);
    this.lead.loop.model = model;
    this.ctx.config.model = model;
  }

  async spawn(request: SpawnRequest, by: string): Promise<string> {
    // A team being stopped starts nobody: a teammate spawned after the stop took its list of the live ones
    // would run on past it (and, with the person's queue closed, send its plan to the lead).
    if (this.#closing !== undefined) throw new Error(`the team is closing (${this.#closing}); nobody new starts`);
    const spawning = this.#spawn(request, by);
    this.#spawning.add(spawning);
    try {
      return await spawning;
    } finally {
      this.#spawning.delete(spawning);
    }
  }

  async #spawn(request: SpawnRequest, by: string): Promise<string> {
    if (request.name === LEAD_NAME) throw new Error(`'${LEAD_NAME}' is the lead's name; choose another`);
    const existing = this.teammates.get(request.name);
    if (existing && !existing.finished) {
      throw new Error(`a teammate named '${request.name}' is already running; choose another name or shut it down first`);
    }
    const { roles, errors } = loadRoles(this.ctx.workspace.teamDir);
    const role = roles.get(request.role);
    // The spawn's own choices, then the settings' roles.<role>, then the role file's front matter.
    const settings = this.roleSettings(request.role);
    const kind = request.agent ?? settings.agent ?? role?.agent ?? 'huddle';
    const external = kind === 'huddle' ? undefined : kind;
    if (external) await this.loadExternal();
    // An external agent's program must be there before anything is recorded: else one clear error for the lead.
    const launch = external ? resolveLaunch(external, { workspaceRoot: this.ctx.workspace.root, commandLine: request.command }) : undefined;
    // Its MCP server is huddle itself: a huddle that cannot find its own cli.js says so before recording a member.
    if (external && external !== 'command') this.#externals().huddleCliPath();
    // gemini, codex and programs choose their own model unless one is named; huddle's default is a Claude model.
    const chosenModel = request.model ?? settings.model ?? role?.model ?? (external && external !== 'claude-code' ? undefined : this.ctx.config.model);
    // An alias (opus, sonnet, haiku) is sent as the id huddle prices; another CLI's names are its own.
    const namedModel = chosenModel !== undefined && !external ? resolveModelAlias(chosenModel) : chosenModel;
    const model = namedModel ?? kind;
    const planModeRequired = request.planModeRequired ?? settings.planModeRequired ?? role?.plan_mode_required ?? false;
    const permission = teammateMode({
      requested: request.permissionMode,
      role: settings.permissionMode ?? role?.permission_mode,
      run: this.permissions.runMode(),
      byLead: by === LEAD_NAME,
    });
    this.permissions.setMode(request.name, permission.mode);
    const prompt = planModeRequired
      ? `${request.prompt}\n\nYou are in plan mode: you can only read until the lead approves your plan. Send it with plan_approval.`
      : request.prompt;
    // A worker host with a free slot runs it (a team on PostgreSQL; huddle's own loop, not an external
    // agent); with none connected, this process does.
    const remote = external
      ? undefined
      : await placeOnWorker(this, {
          name: request.name,
          role: request.role,
          model,
          prompt,
          planModeRequired,
          permissionMode: permission.mode ?? this.permissions.runMode(),
        });
    if (remote) return [remote, ...errors.map((e) => `note: ${e}`), permission.note && `note: ${permission.note}`].filter(Boolean).join('\n');
    // Its own git worktree when asked, or by the role's or the config's default; one left by an
    // earlier spawn of that name is reused, so its work carries on. The team state stays here.
    const wantsWorktree =
      request.worktree ?? settings.worktree ?? role?.worktree ?? (this.ctx.config.worktrees || hasWorktree(this.ctx.workspace.root, request.name));
    const worktree = wantsWorktree ? await ensureWorktree(this.ctx.workspace.root, request.name) : undefined;
    await this.ctx.roster.add({
      name: request.name,
      role: request.role,
      ...(namedModel ? { model: namedModel } : {}),
      status: 'working',
      worktree: worktree?.relativePath,
      ...(external ? { agent: external } : {}),
      // Read-only until its plan is approved, across a resume too (resume.ts reads it).
      ...(planModeRequired ? { plan_mode: 'pending' } : {}),
    });

    try {
      this.startTeammate(
        {
          name: request.name,
          role: request.role,
          model,
          roleDef: role,
          worktree,
          planModeRequired,
          agent: external,
          agentModel: namedModel,
          launch,
          spawnedBy: by,
        },
        prompt,
      );
    } catch (error) {
      // It never started: the roster says so, rather than showing it `working` forever.
      await this.ctx.roster.setStatus(request.name, 'failed', { error: error instanceof Error ? error.message : String(error) }).catch(() => undefined);
      throw error;
    }
    const notes = [
      role ? undefined : `note: '${request.role}' is not a known role (known: ${[...roles.keys()].join(', ')}); it runs without role instructions`,
      ...errors.map((e) => `note: ${e}`),
      permission.note && `note: ${permission.note}`,
    ].filter(Boolean);
    const where = worktree ? `, ${worktree.created ? 'new' : 'reused'} worktree ${worktree.relativePath} on ${worktree.branch}` : '';
    const agent = external ? `${external}${namedModel ? ` ${namedModel}` : ''}` : model;
    return [`spawned ${request.name} (${request.role}, ${agent}${planModeRequired ? ', plan mode' : ''}${where})`, ...notes].join('\n');
  }

  /** A teammate's tools, prompt and loop, as on spawn; a resumed one waits for start() until its transcript is in place. */
  startTeammate(spec: TeammateStart, prompt: string, resume?: TeammateResume): Teammate {
    const tools = teammateToolsets(this, this, { name: spec.name, role: spec.role, roleTools: spec.roleDef?.tools, planModeRequired: spec.planModeRequired });
    const identity = { name: spec.name, role: spec.role, team: this.ctx.teamName };
    if (spec.agent) return this.#startExternal(spec, spec.agent, prompt, resume);
    const teammate = new Teammate(this.ctx, {
      name: spec.name,
      role: spec.role,
      model: spec.model,
      system: teammateSystemPrompt(
        identity,
        spec.worktree?.workspace.root ?? this.ctx.workspace.root,
        spec.roleDef?.body ?? '',
        LEAD_NAME,
        spec.worktree && worktreeInstructions(spec.worktree),
      ),
      workspace: spec.worktree?.workspace,
      tools: tools.start,
      fullTools: tools.full,
      prompt,
      planModeRequired: spec.planModeRequired,
      resume,
      spawnedBy: spec.spawnedBy,
      maxTurns: this.roleSettings(spec.role).maxTurns,
    });
    this.teammates.set(spec.name, teammate);
    if (!resume) teammate.start();
    return teammate;
  }

  #externalCode: typeof import('../external/external-start.js') | undefined;

  /** Loads the external agents' code (agents/external/external-start.ts) before the first external teammate starts. */
  async loadExternal(): Promise<void> {
    this.#externalCode ??= await import('../external/external-start.js');
  }

  #externals(): typeof import('../external/external-start.js') {
    if (!this.#externalCode) throw new Error('an external teammate was started before loadExternal()');
    return this.#externalCode;
  }

  /** An external agent CLI as a teammate (agents/external/): the same lifecycle, its turns run by its CLI. */
  #startExternal(spec: TeammateStart, kind: NonNullable<TeammateStart['agent']>, prompt: string, resume?: TeammateResume): Teammate {
    const { ExternalTeammate, externalSetup, teamChannel } = this.#externals();
    const root = this.ctx.workspace.root;
    const identity = { name: spec.name, role: spec.role, team: this.ctx.teamName };
    const setup = externalSetup({
      kind,
      launch: spec.launch ?? resolveLaunch(kind, { workspaceRoot: root }),
      identity,
      model: spec.agentModel,
      workspace: spec.worktree?.workspace ?? this.ctx.workspace,
      workspaceRoot: root,
      roleBody: spec.roleDef?.body,
      worktreeNote: spec.worktree && worktreeInstructions(spec.worktree),
      planMode: spec.planModeRequired,
      config: this.ctx.config,
      permissions: this.permissions,
      session: spec.agentSession,
      // Its program runs in the sandbox (external-sandbox.ts); the team's state reaches it only
      // through its own channel, acting as it alone (a program in a PTY calls no tools).
      channel: kind === 'command' ? undefined : teamChannel(this.ctx, this, spec.name, spec.worktree?.workspace),
      answerShutdown: (requestId) => this.answerShutdown(spec.name, requestId, true),
    });
    const teammate = new ExternalTeammate(
      this.ctx,
      {
        name: spec.name,
        role: spec.role,
        model: spec.model,
        system: setup.driver.instructions,
        workspace: spec.worktree?.workspace,
        tools: new ToolRegistry(),
        prompt,
        planModeRequired: spec.planModeRequired,
        resume,
      },
      setup,
    );
    this.teammates.set(spec.name, teammate);
    if (!resume) teammate.start();
    return teammate;
  }

  // ---- the team tools (TeamControl) -----------------------------------------------------------

  describeRoster(): string {
    const lines = this.ctx.roster.members().map((m) => {
      const why = m.status_reason ?? m.error;
      return `${m.name} (${m.role}) ${m.status}${why ? `: ${why}` : ''}`;
    });
    return lines.join('\n');
  }

  async broadcast(from: string, content: string): Promise<number> {
    const sent = await this.bus.broadcast(from, content);
    return sent.length;
  }

  /** `by` is who asks: the lead (its tool), or the person ('user', from a face): the request is from them. */
  async requestShutdown(teammate: string, by: string = LEAD_NAME): Promise<string> {
    const member = this.teammates.get(teammate);
    if (!member && this.runsElsewhere(teammate)) return this.protocols.requestShutdown(teammate);
    if (!member) {
      const names = [...this.teammates.keys()];
      throw new Error(`no teammate named '${teammate}'; teammates: ${names.length ? names.join(', ') : 'none'}`);
    }
    if (member.finished) throw new Error(`${teammate} has already stopped`);
    return by === LEAD_NAME ? this.protocols.requestShutdown(teammate) : this.protocols.requestShutdown(teammate, 'the person asked for it', by);
  }

  answerShutdown(teammate: string, requestId: string, approve: boolean, reason?: string): Promise<void> {
    return this.protocols.answerShutdown(teammate, requestId, approve, reason);
  }

  reopenShutdown(teammate: string, requestId: string): void {
    this.protocols.reopenShutdown(teammate, requestId);
  }

  async submitPlan(teammate: string, plan: string): Promise<string> {
    const member = this.teammates.get(teammate);
    if (!member?.planPending) throw new Error('your plan needs no approval: you already have your full tools');
    member.awaitingPlanDecision = true;
    member.requestIdle();
    // The role file's plan_approver over plans.approver (docs/headless.md#plan-approval).
    const approver = loadRoles(this.ctx.workspace.teamDir).roles.get(member.role)?.plan_approver ?? this.ctx.config.planApproval ?? 'lead';
    const byPerson = approver !== 'lead' && this.approvals.answerableFor('plan');
    const requestId = await this.protocols.submitPlan(teammate, plan, !byPerson);
    const autoApproveMinutes = approver === 'auto-after' ? (this.ctx.config.planAutoApproveMinutes ?? 30) : undefined;
    if (byPerson) void askPersonAboutPlan(this.approvals, this.protocols, { teammate, requestId, plan, autoApproveMinutes });
    return requestId;
  }

  decidePlan(requestId: string, approve: boolean, feedback?: string): Promise<string> {
    return this.protocols.decidePlan(requestId, approve, feedback);
  }

  goIdle(teammate: string): void {
    this.teammates.get(teammate)?.requestIdle();
  }

  // ---- ending ---------------------------------------------------------------------------------

  /**
   * True when a headless run is over (docs/contract.md#exit-codes): the lead has ended its turn, its inbox
   * is empty, and no teammate is working — nor about to: a resting teammate of this team with an
   * unread message, or with a claimable task on the board, is woken and says `working` before
   * it takes either, so until then it still counts.
   */
  async isSettled(): Promise<boolean> {
    if (!this.lead.isIdle) return false;
    if ((await this.bus.unreadCount(LEAD_NAME)) > 0) return false;
    // A plan waiting for the person (huddle approve, or its auto-approval timer): the teammate goes on after it.
    if (this.approvals.list().some((r) => r.kind === 'plan')) return false;
    const members = this.ctx.roster.members().filter((m) => m.name !== LEAD_NAME);
    if (members.some((m) => m.status === 'working')) return false;
    if (this.#holds.size > 0) return false;
    const resting = members.filter(
      (m) => (m.status === 'idle' || m.status === 'waiting') && (this.teammates.get(m.name)?.finished === false || this.runsElsewhere(m.name)),
    );
    for (const member of resting) if ((await this.bus.unreadCount(member.name)) > 0) return false;
    const claimers = resting.filter(
      (m) => m.status === 'idle' && !isReviewerRole(m.role) && this.teammates.get(m.name)?.claimsTasks !== false && this.teammates.get(m.name)?.held !== true,
    );
    if (claimers.length > 0 && (await this.ctx.board.hasClaimable())) return false;
    // Likewise an idle reviewer with a task waiting in review (it takes it next).
    for (const member of resting.filter((m) => m.status === 'idle' && isReviewerRole(m.role))) {
      if ((await this.ctx.board.reviewable(member.name)).length > 0) return false;
    }
    return true;
  }

  /** True for a member another live host runs (a worker of a team on PostgreSQL). */
  runsElsewhere(name: string): boolean {
    return this.store.hosts?.isLiveElsewhere(this.ctx.roster.get(name)?.host) === true;
  }

  /** The team finished: workers stop the teammates they run for it. */
  async recallRemote(reason: string): Promise<void> {
    await this.store.hosts?.recall(reason);
  }

  /** Refuses spawns from now on and waits for those under way, so that the list of live teammates taken next is whole. */
  async stopSpawning(reason: string): Promise<void> {
    this.#closing ??= reason;
    await Promise.allSettled([...this.#spawning]);
  }

  /** Stops every live teammate now and waits for their loops to end; from now on nobody new starts. */
  async stopAll(reason: string): Promise<void> {
    await this.stopSpawning(reason);
    const live = this.liveTeammates();
    for (const teammate of live) teammate.stopNow(reason);
    await Promise.all(live.map((t) => t.done));
  }

  /**
   * Stops every agent now but leaves the roster's statuses as they were (nobody `shutdown`): the
   * workspace holds an unfinished team that `--resume` brings back. Then closes like close().
   */
  async suspend(reason: string): Promise<void> {
    await this.stopSpawning(reason);
    const live = this.liveTeammates();
    for (const teammate of live) teammate.suspend(reason);
    await Promise.all(live.map((t) => t.done));
    await this.close(reason);
  }

  /** Stops every agent; the store stays open (its owner, the session, closes it after the last event). */
  async close(reason = 'huddle closed'): Promise<void> {
    await this.stopSpawning(reason);
    this.#watchdog?.stop();
    this.protocols.close();
    this.#unwatchBackoff();
    this.approvals.close(reason); // nothing may wait on a person who is gone
    await this.stopAll(reason);
    await this.lead.close();
    this.budget.close();
    await this.spend.flush();
  }
}

/**
 * The lead's instructions as the caller asked: replaced (--system-prompt; the lead keeps its identity
 * line, which names it to its team) or added to (--append-system-prompt).
 */
function withCallerInstructions(system: SystemPrompt, identity: string, caller: HuddleConfig['leadInstructions']): SystemPrompt {
  if (caller?.replace) return { shared: caller.replace, own: identity };
  return caller?.append ? { ...system, shared: `${system.shared}\n\n${caller.append}` } : system;
}

/** The stored allow-list, plus the prefixes this run was started with (--allowedTools), which are never stored. */
function withRunPrefixes(list: AllowList, prefixes: string[] | undefined): AllowList {
  if (!prefixes?.length) return list;
  return {
    read: () => {
      const stored = list.read();
      return { ...stored, entries: [...new Set([...stored.entries, ...prefixes])] };
    },
    add: (more) => list.add(more),
  };
}
