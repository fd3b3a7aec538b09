// What the lead and every teammate share: a turn loop, an identity, an inbox that is delivered
// to the model exactly once, and a status kept true in the roster.
import { agentEmitter, type AgentEmitter } from '../runtime/events.js';
import type { Message } from '../runtime/bus.js';
import { formatInbox } from '../runtime/tools/message-tools.js';
import { AgentLoop, type TurnOutcome } from './agent-loop.js';
import type { TeamContext } from './team-context.js';
import type { ToolRegistry } from '../runtime/tools/registry.js';

export type AgentStatus = 'working' | 'idle' | 'waiting' | 'shutdown' | 'failed';

export interface AgentSpec {
  name: string;
  role: string;
  model: string;
  system: string;
  tools: ToolRegistry;
}

export abstract class Agent {
  readonly name: string;
  readonly role: string;
  readonly loop: AgentLoop;
  readonly events: AgentEmitter;
  protected readonly ctx: TeamContext;
  /** Set when the agent must stop at the end of its current tool call. */
  protected stopReason: string | undefined;

  constructor(ctx: TeamContext, spec: AgentSpec) {
    this.ctx = ctx;
    this.name = spec.name;
    this.role = spec.role;
    this.events = agentEmitter(ctx.hub, spec.name);
    this.loop = new AgentLoop({
      name: spec.name,
      model: spec.model,
      system: spec.system,
      tools: spec.tools,
      backend: ctx.backend,
      events: this.events,
      workspace: ctx.workspace,
      maxTokens: ctx.config.maxTokens,
      maxTurns: ctx.config.maxTurns,
      hooks: {
        pendingInput: () => this.pendingInput(),
        shouldStop: () => this.shouldEndTurn(),
      },
    });
  }

  get stopping(): boolean {
    return this.stopReason !== undefined;
  }

  /** Asked after every tool call: end the turn there. */
  protected shouldEndTurn(): boolean {
    return this.stopReason !== undefined;
  }

  /** Interrupts the current model call or tool; the agent then waits for its next input. */
  interrupt(): void {
    this.loop.interrupt();
  }

  /** Input injected before each model call while in a turn: unread inbox messages. */
  protected async pendingInput(): Promise<string[] | undefined> {
    const text = await this.deliverInbox();
    return text ? [text] : undefined;
  }

  /**
   * Takes the unread messages of this agent's inbox as one `<inbox>` turn, or undefined.
   * The delivery is logged (synchronously) before the cursor moves, so a crash in between
   * can be detected on resume rather than losing the messages.
   */
  protected async deliverInbox(): Promise<string | undefined> {
    const { messages, nextOffset } = await this.ctx.bus.peek(this.name);
    if (messages.length === 0) {
      await this.ctx.bus.ack(this.name, nextOffset);
      return undefined;
    }
    this.events.emit('message_delivered', { ids: messages.map((m) => m.id), messages, next_offset: nextOffset });
    await this.ctx.bus.ack(this.name, nextOffset);
    this.onDelivered(messages);
    return formatInbox(messages);
  }

  /** A hook for protocol bookkeeping when messages reach the model. */
  protected onDelivered(_messages: Message[]): void {}

  protected async setStatus(status: AgentStatus, extra: { reason?: string; error?: string; task?: number | null } = {}): Promise<void> {
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
