// The Claude Code CLI as a teammate: one long-lived process in streaming mode (`-p --input-format
// stream-json --output-format stream-json --verbose`). Each user turn is a `user` line on its
// stdin; its assistant messages, tool calls and results come back as lines and become huddle's
// events; its `result` line ends the turn with the cost and tokens. Its permission prompts come to
// huddle (`--permission-prompt-tool stdio`: `can_use_tool` control requests), so huddle's
// permission mode, deny-list and the person's approvals decide for it. huddle's MCP server gives
// it the team tools (mcp__huddle__claim_task, …). Its session id is kept: a resume continues the
// same conversation (`--resume <id>`).
//
// Claude Code (2.1.330 and later) defers MCP tools behind its ToolSearch tool: the model would
// have to search before it could claim a task. huddle's server is `alwaysLoad`: its team tools
// are in the first request, and Claude Code waits for the server to connect before sending it.
import type { SpawnLike } from '../../runtime/process/spawn.js';
import { toTokenUsage } from '../../runtime/model/pricing.js';
import { AgentProcess } from './child-process.js';
import type { DriverSetup, ExternalDriver, TurnReport, TurnSink } from './driver.js';

/** How long an interrupt may take before the process is ended instead. */
const INTERRUPT_GRACE_MS = 10_000;

interface Turn {
  sink: TurnSink;
  signal: AbortSignal;
  resolve(report: TurnReport): void;
  interrupted: boolean;
  contextTokens: number | undefined;
  model: string | undefined;
}

/** The arguments huddle adds to Claude Code's own (after the settings' `args`). */
export function claudeCodeArgs(setup: DriverSetup): string[] {
  const mcp = { mcpServers: { huddle: { type: 'stdio', command: setup.mcp.command, args: setup.mcp.args, alwaysLoad: true } } };
  return [
    ...setup.args,
    '-p',
    '--input-format',
    'stream-json',
    '--output-format',
    'stream-json',
    '--verbose',
    // Its permission prompts come to huddle: the mode, the deny-list and the person decide.
    '--permission-prompt-tool',
    'stdio',
    '--permission-mode',
    setup.permissionMode === 'plan' ? 'plan' : 'default',
    '--mcp-config',
    JSON.stringify(mcp),
    '--allowedTools',
    'mcp__huddle',
    '--append-system-prompt',
    setup.instructions,
    ...(setup.model ? ['--model', setup.model] : []),
    ...(setup.session ? ['--resume', setup.session] : []),
  ];
}

export class ClaudeCodeDriver implements ExternalDriver {
  readonly kind = 'claude-code' as const;
  readonly #setup: DriverSetup;
  readonly #spawn: SpawnLike | undefined;
  #process: AgentProcess | undefined;
  #session: string | undefined;
  #turn: Turn | undefined;
  /** Tool names by id: a tool_result line names only the id. */
  readonly #toolNames = new Map<string, string>();
  /** The session's running cost as last reported (older versions report only that). */
  #lastTotalCost: number | undefined;

  constructor(setup: DriverSetup, spawn?: SpawnLike) {
    this.#setup = setup;
    this.#spawn = spawn;
    this.#session = setup.session;
  }

  get session(): string | undefined {
    return this.#session;
  }

  runTurn(text: string, sink: TurnSink, signal: AbortSignal): Promise<TurnReport> {
    if (this.#turn) return Promise.resolve({ outcome: 'failed', text: '', error: 'claude-code is already in a turn' });
    return new Promise<TurnReport>((resolve) => {
      const turn: Turn = { sink, signal, resolve: () => undefined, interrupted: false, contextTokens: undefined, model: undefined };
      const onAbort = () => this.#interrupt(turn);
      turn.resolve = (report) => {
        if (this.#turn !== turn) return;
        this.#turn = undefined;
        signal.removeEventListener('abort', onAbort);
        resolve({ ...report, contextTokens: report.contextTokens ?? turn.contextTokens, model: report.model ?? turn.model });
      };
      this.#turn = turn;
      void this.#ensureProcess().then((process) => {
        if (!process || this.#turn !== turn) return;
        if (signal.aborted) return turn.resolve({ outcome: 'interrupted', text: '' });
        signal.addEventListener('abort', onAbort, { once: true });
        process.write({ type: 'user', message: { role: 'user', content: text || '(continue)' } });
      });
    });
  }

  reset(): void {
    this.#session = undefined;
    this.#lastTotalCost = undefined;
    const process = this.#process;
    this.#process = undefined;
    void process?.stop(this.#setup.killGraceMs);
  }

  async close(): Promise<void> {
    const process = this.#process;
    this.#process = undefined;
    this.#turn?.resolve({ outcome: 'interrupted', text: '' });
    await process?.stop(this.#setup.killGraceMs);
  }

  async #ensureProcess(): Promise<AgentProcess | undefined> {
    if (this.#process?.running) return this.#process;
    const setup = { ...this.#setup, session: this.#session };
    try {
      const child: AgentProcess = await AgentProcess.start({
        command: setup.command,
        args: claudeCodeArgs(setup),
        cwd: setup.cwd,
        env: setup.env,
        spawn: this.#spawn,
        onJson: (line) => void this.#onLine(child, line),
        onExit: (code, signal) => this.#onExit(child, code, signal),
      });
      this.#process = child;
      // A new process starts its running cost again (or from the resumed session's: see #cost).
      this.#lastTotalCost = undefined;
      return child;
    } catch (error) {
      this.#turn?.resolve({ outcome: 'failed', text: '', error: `claude-code could not start: ${(error as Error).message}` });
      return undefined;
    }
  }

  #onExit(child: AgentProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#process === child) this.#process = undefined;
    const turn = this.#turn;
    if (!turn) return;
    if (turn.interrupted) return turn.resolve({ outcome: 'interrupted', text: '' });
    const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
    const tail = child.stderrTail();
    turn.resolve({ outcome: 'failed', text: '', error: `claude-code ${how}${tail ? `: ${tail}` : ''}` });
  }

  /** Asks for an interrupt; a process that does not answer in time is ended (the session survives). */
  #interrupt(turn: Turn): void {
    turn.interrupted = true;
    const child = this.#process;
    if (!child?.write({ type: 'control_request', request_id: `huddle_interrupt_${Date.now()}`, request: { subtype: 'interrupt' } })) {
      return turn.resolve({ outcome: 'interrupted', text: '' });
    }
    const timer = setTimeout(() => {
      if (this.#turn === turn) void child.stop(this.#setup.killGraceMs);
    }, INTERRUPT_GRACE_MS);
    timer.unref();
  }

  async #onLine(child: AgentProcess, line: Record<string, unknown>): Promise<void> {
    const turn = this.#turn;
    switch (line.type) {
      case 'system':
        if (line.subtype === 'init' && typeof line.session_id === 'string') {
          this.#session = line.session_id;
          const model = typeof line.model === 'string' ? line.model : undefined;
          if (turn) turn.model = model;
          turn?.sink.session(line.session_id, model);
        }
        return;
      case 'assistant':
        if (turn) this.#assistant(turn, line.message as AssistantMessage | undefined);
        return;
      case 'user':
        if (turn) this.#toolResults(turn, line.message as { content?: unknown } | undefined);
        return;
      case 'result':
        if (turn) turn.resolve(this.#result(turn, line));
        return;
      case 'control_request':
        await this.#answer(child, line);
        return;
      default:
        return;
    }
  }

  #assistant(turn: Turn, message: AssistantMessage | undefined): void {
    if (!message || !Array.isArray(message.content)) return;
    const usage = message.usage;
    if (usage) {
      turn.contextTokens =
        (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) + (usage.output_tokens ?? 0);
    }
    for (const block of message.content) {
      if (block.type === 'text' && typeof block.text === 'string') turn.sink.text(block.text);
      else if (block.type === 'tool_use' && typeof block.id === 'string') {
        const name = String(block.name ?? '?');
        this.#toolNames.set(block.id, name);
        turn.sink.toolCall(block.id, name, block.input ?? {});
      }
    }
  }

  #toolResults(turn: Turn, message: { content?: unknown } | undefined): void {
    if (!message || !Array.isArray(message.content)) return;
    for (const block of message.content as Array<Record<string, unknown>>) {
      if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
      const name = this.#toolNames.get(block.tool_use_id) ?? '?';
      turn.sink.toolResult(block.tool_use_id, name, block.is_error !== true, resultText(block.content));
    }
  }

  #result(turn: Turn, line: Record<string, unknown>): TurnReport {
    const usage = toTokenUsage(line.usage as Record<string, number> | undefined);
    const costUsd = this.#cost(line);
    const base = { usage, costUsd, text: typeof line.result === 'string' ? line.result : '' };
    if (line.subtype === 'success' && line.is_error !== true) return { outcome: 'end_turn', ...base };
    if (turn.interrupted) return { outcome: 'interrupted', ...base };
    const errors = Array.isArray(line.errors) ? line.errors.map(String).join('; ') : '';
    return {
      outcome: 'failed',
      ...base,
      error: `claude-code: ${String(line.subtype ?? 'error')}${errors ? `: ${errors}` : base.text ? `: ${base.text}` : ''}`,
    };
  }

  /** This turn's cost: the per-result figure when the CLI gives it, else the growth of its running total. */
  #cost(line: Record<string, unknown>): number {
    const total = typeof line.total_cost_usd === 'number' ? line.total_cost_usd : undefined;
    const since = line.model_usage_since_last_result;
    let cost: number | undefined;
    if (since && typeof since === 'object') {
      cost = Object.values(since as Record<string, { costUSD?: unknown }>).reduce(
        (sum, model) => sum + (typeof model.costUSD === 'number' ? model.costUSD : 0),
        0,
      );
    } else if (total !== undefined) {
      cost = this.#lastTotalCost === undefined ? total : Math.max(0, total - this.#lastTotalCost);
    }
    if (total !== undefined) this.#lastTotalCost = total;
    return cost ?? 0;
  }

  /** Claude Code asks before a tool runs: huddle's permission mode and the person answer. */
  async #answer(child: AgentProcess, line: Record<string, unknown>): Promise<void> {
    const request = line.request as { subtype?: string; tool_name?: string; input?: Record<string, unknown> } | undefined;
    const requestId = line.request_id;
    if (request?.subtype !== 'can_use_tool' || typeof requestId !== 'string') {
      child.write({
        type: 'control_response',
        response: { subtype: 'error', request_id: requestId, error: `huddle does not handle ${String(request?.subtype)}` },
      });
      return;
    }
    const input = request.input ?? {};
    const turn = this.#turn;
    const why = turn
      ? await turn.sink.permission(String(request.tool_name ?? ''), input, turn.signal).catch((error: Error) => error.message)
      : 'no turn is running';
    const response = why === undefined ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message: why };
    child.write({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
  }
}

interface AssistantMessage {
  content?: Array<{ type?: string; text?: unknown; id?: unknown; name?: unknown; input?: unknown }>;
  usage?: { input_tokens?: number; output_tokens?: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
}

/** A tool result's content (a string, or text and other blocks) as text. */
export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block: { type?: string; text?: unknown }) =>
        block?.type === 'text' && typeof block.text === 'string' ? block.text : `[${String(block?.type ?? 'content')}]`,
      )
      .join('\n');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}
