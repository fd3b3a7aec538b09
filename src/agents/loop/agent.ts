// What the lead and every teammate share: a turn loop, an identity, an inbox that is delivered
// to the model exactly once, and a status kept true in the roster.
import type { MemberStatus } from '../../runtime/vocabulary.js';
import { describeWait, type CallWait } from '../../runtime/model/call-governor.js';
import type { SystemInput } from '../../runtime/model/system-prompt.js';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { agentEmitter, type AgentEmitter } from '../../runtime/events/events.js';
import type { Message } from '../../runtime/store/bus.js';
import { Inbox } from '../../runtime/inbox.js';
import { AgentLoop, type AgentLoopOptions, type PendingInput, type TurnOutcome } from './agent-loop.js';
import { Compactor, type CompactionResult } from './compaction.js';
import { fill } from '../prompts/templates.js';
import type { TeamContext } from '../team-context.js';
import type { ToolRegistry } from '../../runtime/tools/registry.js';
import type { Workspace } from '../../runtime/workspace/workspace.js';

export interface AgentSpec {
  name: string;
  role: string;
  model: string;
  /**
   * huddle's own system prompt for it: the block shared by its role and its own block (an external
   * CLI's instructions: one string); the project's instructions are added (refreshSystem).
   */
  system: SystemInput;
  tools: ToolRegistry;
  /** Where its file tools and shell run, when not the team's workspace (a teammate's git worktree). */
  workspace?: Workspace;
  /** Model calls allowed for one turn (a role's setting), over the team's. */
  maxTurns?: number | undefined;
  /** Makes its turn loop: an external agent CLI's turns run in its own process (agents/external/). */
  makeLoop?: (options: AgentLoopOptions) => AgentLoop;
}

export abstract class Agent {
  readonly name: string;
  readonly role: string;
  readonly loop: AgentLoop;
  readonly events: AgentEmitter;
  /** Trims and compacts this agent's context (compaction.ts). */
  readonly compactor: Compactor;
  /** Its inbox: delivery exactly once, the `<inbox>` turn, the wait for a message (runtime/inbox.ts). */
  readonly inbox: Inbox;
  protected readonly ctx: TeamContext;
  /** Set when the agent must stop at the end of its current tool call. */
  protected stopReason: string | undefined;
  /** huddle's system prompt for this agent, before the project's instructions are added. */
  readonly #baseSystem: SystemInput;
  /** What the system prompt was composed from last: redone when either changes. */
  #composedFrom: { memory: number; session: string | undefined } | undefined;

  /** The status reason before its model call started waiting for the team's governor, put back once it is sent. */
  #reasonBeforeWait: { reason: string | undefined } | undefined;
  /** Status writes of the waits, in order. */
  #waitStatus: Promise<unknown> = Promise.resolve();

  constructor(ctx: TeamContext, spec: AgentSpec) {
    this.ctx = ctx;
    this.name = spec.name;
    this.role = spec.role;
    this.#baseSystem = spec.system;
    this.loop = (spec.makeLoop ?? ((options: AgentLoopOptions) => new AgentLoop(options)))({
      name: spec.name,
      model: spec.model,
      system: spec.system,
      tools: spec.tools,
      backend: ctx.backend,
      events: agentEmitter(ctx.hub, spec.name),
      workspace: spec.workspace ?? ctx.workspace,
      maxTokens: ctx.config.maxTokens,
      maxTurns: spec.maxTurns ?? ctx.config.maxTurns,
      hooks: {
        pendingInput: () => this.pendingInput(),
        shouldStop: () => this.shouldEndTurn(),
        beforeModelCall: (signal) => {
          this.refreshSystem();
          return this.compactor.beforeModelCall(signal);
        },
        budgetGate: (signal) => this.budgetGate(signal),
        onModelWait: (wait) => this.#showModelWait(wait),
        viewMessages: (messages) => this.viewMessages(messages),
      },
    });
    this.refreshSystem();
    // Through the loop's emitter: every event of this agent also reaches its transcript.
    this.events = this.loop.events;
    this.inbox = new Inbox(spec.name, ctx.bus, this.events);
    this.compactor = new Compactor({
      loop: this.loop,
      identity: { name: spec.name, role: spec.role, team: ctx.teamName },
      // What the restarted context lists (docs/contract.md#injected-turns): the tasks it owns that are not done.
      ownedTasks: async () => (await ctx.board.list()).filter((task) => task.owner === spec.name && task.status !== 'completed'),
      backend: ctx.backend,
      transcripts: ctx.transcripts,
      config: ctx.config,
      beforeCompact: async (trigger, focus) => {
        if (!ctx.hooks?.has('PreCompact')) return;
        await ctx.hooks.run(
          this.events,
          { hook_event_name: 'PreCompact', trigger, ...(focus ? { custom_instructions: focus } : {}) },
          { cwd: this.loop.workspace.root },
        );
      },
    });
  }

  /**
   * The system prompt: huddle's for this agent, then the project's instructions (CLAUDE.md,
   * AGENTS.md: docs/contract.md#injected-turns), then for the lead what SessionStart hooks added. Checked before
   * every model call and recomposed only when a file changed, so an edit to CLAUDE.md reaches every
   * agent at its next call, and a compaction (which rewrites messages, not the system prompt)
   * never loses it. In two blocks: the project's instructions are the same for every agent, so they
   * go into the shared block (a sibling reads them from the prompt cache); the session's context,
   * the lead's alone, into its own.
   */
  protected refreshSystem(): void {
    const memory = this.ctx.memory?.current();
    const session = this.role === 'lead' ? this.ctx.sessionContext : undefined;
    const version = this.ctx.memory?.version ?? 0;
    if (this.#composedFrom && this.#composedFrom.memory === version && this.#composedFrom.session === session) return;
    this.#composedFrom = { memory: version, session };
    const base = this.#baseSystem;
    const sessionBlock = session && fill('session-start-context', { context: session });
    const join = (...parts: Array<string | undefined>) => parts.filter(Boolean).join('\n\n');
    this.loop.system =
      typeof base === 'string'
        ? join(base, memory?.instructions.text, sessionBlock)
        : { shared: join(base.shared, memory?.instructions.text), own: join(base.own, sessionBlock) };
  }

  /** The messages as its next request sends them: the transcript's, unless an agent shortens some (the lead). */
  protected viewMessages(messages: MessageParam[]): MessageParam[] {
    return messages;
  }

  /** /compact: now when between turns, else before the next model call (`deferred`). */
  compact(focus?: string): { deferred: boolean; done: Promise<CompactionResult> } {
    return this.compactor.compact(focus);
  }

  /**
   * /clear: forgets the conversation, logged as a `context_reset` (the log keeps what was said, and
   * a resume starts from the cleared context). Not while in a turn: false then.
   */
  clear(): boolean {
    if (this.loop.running) return false;
    this.events.emit('context_reset', { reason: 'clear' });
    return true;
  }

  get stopping(): boolean {
    return this.stopReason !== undefined;
  }

  /**
   * Before each model call: waits while a reached budget is put to the person. A teammate told to
   * stop shuts down; the lead only ends this turn (it stays to hear the person).
   */
  protected async budgetGate(signal: AbortSignal): Promise<string | undefined> {
    const halt = await this.ctx.budget?.gate(this.name, signal);
    if (halt !== undefined && !signal.aborted && this.role !== 'lead') this.stopReason ??= halt;
    return halt;
  }

  /** Asked after every tool call: end the turn there. */
  protected shouldEndTurn(): boolean {
    return this.stopReason !== undefined;
  }

  /** Interrupts the current model call or tool; the agent then waits for its next input. */
  interrupt(): void {
    this.loop.interrupt();
    this.compactor.interrupt();
  }

  /**
   * Set by an idle loop whose look at the inbox (delivering or finding it empty) starts the turn it
   * runs next: that turn's first model call needs no second look, so a delivered message costs one
   * scan of the inbox. Every later call of the turn looks again.
   */
  protected inboxJustRead = false;

  /** Runs a turn that an idle loop's look at the inbox started (inboxJustRead). */
  protected async runTurnAfterLook(...args: Parameters<AgentLoop['runTurn']>): Promise<TurnOutcome> {
    this.inboxJustRead = true;
    try {
      return await this.loop.runTurn(...args);
    } finally {
      this.inboxJustRead = false;
    }
  }

  /** Input injected before each model call while in a turn: unread inbox messages. */
  protected async pendingInput(): Promise<PendingInput[] | undefined> {
    if (this.inboxJustRead) {
      this.inboxJustRead = false;
      return undefined;
    }
    const text = await this.deliverInbox();
    return text ? [text] : undefined;
  }

  /**
   * Takes the unread messages of this agent's inbox as one `<inbox>` turn, or undefined: the
   * inbox's four steps (runtime/inbox.ts), then the protocols' bookkeeping.
   */
  protected async deliverInbox(): Promise<string | undefined> {
    const delivery = await this.inbox.deliver(() => this.beforeTaking());
    if (!delivery) return undefined;
    this.onDelivered(delivery.messages);
    return delivery.text;
  }

  /** Between seeing unread messages and taking them: how an agent shows it is busy before its inbox empties. */
  protected async beforeTaking(): Promise<void> {}

  /** A hook for protocol bookkeeping when messages reach the model. */
  protected onDelivered(_messages: Message[]): void {}

  /** A call queued for a slot or waiting out the team's back-off says so in the agent's status reason. */
  #showModelWait(wait: CallWait | undefined): void {
    const member = this.ctx.roster.get(this.name);
    if (!member || (!wait && !this.#reasonBeforeWait)) return;
    let reason: string | undefined;
    if (wait) {
      this.#reasonBeforeWait ??= { reason: member.status_reason };
      reason = describeWait(wait);
    } else {
      reason = this.#reasonBeforeWait?.reason;
      this.#reasonBeforeWait = undefined;
    }
    const status = member.status;
    const task = member.task;
    this.#waitStatus = this.#waitStatus
      .then(() => this.ctx.roster.setStatus(this.name, status, { ...(reason !== undefined ? { reason } : {}), ...(task !== undefined ? { task } : {}) }))
      // A status reason is only shown: a failed write must not fail the model call.
      .catch(() => undefined);
  }

  protected async setStatus(status: MemberStatus, extra: { reason?: string; error?: string; task?: number | null } = {}): Promise<void> {
    await this.ctx.roster.setStatus(this.name, status, extra);
  }

  protected describeOutcome(outcome: TurnOutcome): string {
    switch (outcome.kind) {
      case 'failed':
        return outcome.error;
      case 'turn_limit':
        return `turn limit reached (${outcome.limit} model calls)`;
      default:
        return outcome.kind;
    }
  }
}
