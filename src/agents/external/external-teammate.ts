// A teammate that is an external agent CLI (docs/contract.md#lead-only): the same lifecycle as huddle's own
// (WORK, then IDLE woken by messages and claimable tasks; statuses in the roster; the shutdown
// and plan protocols; budgets; the stall watchdog), with its turns run by its CLI through a
// driver (external-loop.ts). Its inbox is delivered as user turns exactly once, like everyone's:
// the delivery is logged, then acked, then the text goes to the CLI. Its program is ended when it
// stops; its CLI's session id is kept in the roster so a resume continues it.
import path from 'node:path';
import type { PermissionGate } from '../../runtime/permissions/permission-gate.js';
import { whyNotReadOnly } from '../../runtime/permissions/read-only-shell.js';
import type { SpawnLike } from '../../runtime/process/spawn.js';
import type { Message } from '../../runtime/store/bus.js';
import { ToolError } from '../../runtime/tools/types.js';
import { PERSON_SENDER } from '../../runtime/vocabulary.js';
import type { CompactionResult } from '../loop/compaction.js';
import type { TeamContext } from '../team-context.js';
import { Teammate, type TeammateSpec } from '../lifecycle/teammate.js';
import type { AgentChannel } from './agent-channel.js';
import type { ModelGrant } from './model-relay.js';
import { ClaudeCodeDriver } from './claude-code.js';
import { CodexDriver } from './codex.js';
import type { DriverSetup, ExternalDriver } from './driver.js';
import { ExternalTurnLoop } from './external-loop.js';
import { GeminiDriver } from './gemini.js';
import { OpenCodeDriver } from './opencode.js';
import type { AgentKind } from './launch.js';
import { PtyDriver, type CommandLine, type TerminalView } from './pty-driver.js';

/** Claude Code's tools that change files, and where each names its file. */
const WRITE_TOOLS: Record<string, string> = { Write: 'file_path', Edit: 'file_path', MultiEdit: 'file_path', NotebookEdit: 'notebook_path' };

export interface ExternalSetup {
  kind: AgentKind;
  driver: DriverSetup;
  permissions: PermissionGate;
  /** The spawn seam: the sandbox's (external-sandbox.ts). */
  spawn?: SpawnLike | undefined;
  /** For a program in a PTY: the command line that runs it in the sandbox. */
  commandLine?: CommandLine | undefined;
  /** Answers a shutdown request on its behalf (a program in a PTY cannot call tools). */
  answerShutdown(requestId: string): Promise<void>;
  /** Its way into the team, open while it runs (huddle's MCP server works through it). */
  channel?: AgentChannel | undefined;
  /** Its access to the model through huddle's relay (Claude Code), granted while it runs. */
  model?: ModelGrant | undefined;
}

export function createDriver(setup: ExternalSetup): ExternalDriver {
  switch (setup.kind) {
    case 'claude-code':
      return new ClaudeCodeDriver(setup.driver, setup.spawn);
    case 'gemini':
      return new GeminiDriver(setup.driver, setup.spawn);
    case 'codex':
      return new CodexDriver(setup.driver, setup.spawn);
    case 'opencode':
      return new OpenCodeDriver(setup.driver, setup.spawn);
    case 'command':
      return new PtyDriver(setup.driver, setup.commandLine);
  }
}

export class ExternalTeammate extends Teammate {
  readonly kind: AgentKind;
  readonly external: ExternalSetup;
  readonly driver: ExternalDriver;

  constructor(ctx: TeamContext, spec: TeammateSpec, external: ExternalSetup) {
    const driver = createDriver(external);
    let self: ExternalTeammate | undefined;
    // A program in a PTY (a shell) waits for input as long as it runs: no idle timeout for it.
    const context = external.kind === 'command' ? { ...ctx, config: { ...ctx.config, idleTimeoutMs: Infinity } } : ctx;
    super(context, {
      ...spec,
      makeLoop: (options) =>
        new ExternalTurnLoop(options, driver, {
          permission: (tool, input, signal) => self!.#permission(tool, input, signal),
          session: (id) => void self!.#keepSession(id),
          exited: (why) => self!.requestStop(why),
        }),
    });
    // The loop is made inside super(), before `this` exists; its callbacks reach the teammate through `self`.
    // oxlint-disable-next-line typescript/no-this-alias
    self = this;
    this.kind = external.kind;
    this.external = external;
    this.driver = driver;
    // However it ends (shut down, failed, stopped by the person), its program ends with it, and
    // its channel and model access close (unless a restart of it has opened them again).
    const channel = external.channel?.open();
    const model = external.model?.open();
    // Closing its program is best effort: a process already gone has nothing to close.
    void this.done
      .then(() => driver.close())
      .catch(() => undefined)
      .then(() => Promise.all([external.channel?.close(channel), external.model?.close(model)]));
  }

  /** The screen of a program in a PTY (command teammates), for the console's pane. */
  get terminal(): TerminalView | undefined {
    return this.driver instanceof PtyDriver ? this.driver : undefined;
  }

  override get claimsTasks(): boolean {
    return this.kind !== 'command';
  }

  override respawn(spec: TeammateSpec): Teammate {
    // A fresh start: a new session of its CLI (the restart turn carries the summary).
    return new ExternalTeammate(this.ctx, spec, { ...this.external, driver: { ...this.external.driver, session: undefined } });
  }

  override start(): void {
    // A resumed idle teammate's resume note entered its transcript without a turn: its CLI gets
    // it with its next turn (so messages delivered before the crash are not lost to it).
    const last = this.loop.messages.at(-1);
    if (last?.role === 'user' && this.loop instanceof ExternalTurnLoop && this.prompt === '') {
      const text = typeof last.content === 'string' ? last.content : last.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n');
      if (text) this.loop.carry.push(text);
    }
    super.start();
  }

  /** Its CLI manages its own context: huddle does not summarise it. */
  override compact(): { deferred: boolean; done: Promise<CompactionResult> } {
    const error = new Error(`${this.name} is a ${this.kind} agent: it manages its own context (huddle cannot compact it)`);
    const done = Promise.reject(error);
    // Only marks the rejection handled: the lifecycle reports its own failure.
    done.catch(() => undefined);
    return { deferred: false, done };
  }

  /** /clear: its CLI starts a new session with the next turn. */
  override clear(): boolean {
    if (!super.clear()) return false;
    this.driver.reset();
    return true;
  }

  /** A program in a PTY cannot answer a shutdown request: huddle approves it on its behalf. */
  protected override onDelivered(messages: Message[]): void {
    super.onDelivered(messages);
    if (this.kind !== 'command') return;
    for (const message of messages) {
      // The shutdown answer is best effort: the process ends either way.
      if (message.type === 'shutdown_request' && message.request_id) void this.external.answerShutdown(message.request_id).catch(() => undefined);
    }
  }

  /** A program in a PTY gets each message's text as typed input, not the `<inbox>` block. */
  protected override async deliverInbox(): Promise<string | undefined> {
    const block = await super.deliverInbox();
    if (block === undefined || this.kind !== 'command') return block;
    const typed = block
      .split('\n')
      .slice(1, -1)
      .flatMap((line) => {
        try {
          const message = JSON.parse(line) as Message;
          if (message.type !== 'message' && message.type !== 'broadcast') return [];
          // The person's own shell pane (session's SHELL_ROLE) takes input from the person alone: an
          // agent's message typed there would run as if the person had typed it, unasked (docs/trust.md).
          if (this.role === 'shell' && message.from !== PERSON_SENDER) {
            this.events.emit('warning', { message: `${message.from}'s message to ${this.name} was not typed: only the person types into their shell` });
            return [];
          }
          return [message.content];
        } catch {
          return [];
        }
      });
    // Nothing to type (a shutdown request, answered above): no turn.
    return typed.length ? typed.join('\n') : undefined;
  }

  async #keepSession(id: string): Promise<void> {
    const member = this.ctx.roster.get(this.name);
    if (member?.agent_session === id) return;
    this.external.driver.session = id;
    // The session id only speeds a resume; without it the next turn starts a new session.
    await this.ctx.roster.update(this.name, { agent_session: id }).catch(() => undefined);
  }

  /** Its CLI asks before a tool runs: huddle's permission mode, deny-list and the person decide. */
  async #permission(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<string | undefined> {
    const gate = this.external.permissions;
    const workspace = this.spec.workspace ?? this.ctx.workspace;
    const context = { workspace, agent: this.name, signal, events: this.events };
    try {
      // Plan mode before approval: it may only read, whatever its permission mode.
      if (this.planPending) {
        if (WRITE_TOOLS[tool]) return `refused in plan mode: ${tool} is not available until the lead approves your plan (send it with plan_approval)`;
        const why = tool === 'Bash' ? whyNotReadOnly(String(input.command ?? '')) : undefined;
        if (why) return `refused in plan mode: ${why}. Send your plan with plan_approval first.`;
      }
      if (tool === 'Bash' || tool === 'shell') await gate.checkBash(String(input.command ?? ''), context);
      const field = WRITE_TOOLS[tool];
      if (field) {
        const file = String(input[field] ?? '');
        const relative = path.relative(workspace.root, path.resolve(workspace.root, file));
        if (relative.startsWith('..') || path.isAbsolute(relative)) return `${file} is outside your workspace (${workspace.root}); write inside it`;
        await gate.checkWrite(tool, file, context);
      }
      return undefined;
    } catch (error) {
      if (error instanceof ToolError) return error.message;
      throw error;
    }
  }
}
