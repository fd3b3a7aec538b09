// OpenCode as a teammate: `opencode run --format json TEXT` per turn, the next turn continuing the
// session with `--session <id>`. Its JSON lines are `step_start`, `text` (a finished text part),
// `tool_use` (a finished tool call: its input and output or error), `step_finish` (tokens and the
// cost OpenCode prices from its model table) and `error`; every line carries the sessionID. Its
// configuration comes inline (OPENCODE_CONFIG_CONTENT, merged over the person's files): huddle's
// MCP server as a local server `huddle` (its tools are named huddle_<tool>, allowed without asking),
// huddle's instructions as an instructions file in its private config directory (so they are in its
// system prompt, every turn), and — when huddle's relay serves its model — the Anthropic provider
// pointed at the relay with the stand-in key, both read from its environment ({env:…}), so no key
// is in its configuration. Permission modes: plan → its plan agent, ask → what OpenCode would ask
// is refused (`run` auto-rejects: nobody can answer), auto → --auto. `run` ignores SIGINT: an
// interrupt is SIGTERM.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TokenUsage } from '../../runtime/model/pricing.js';
import { AgentProcess } from './child-process.js';
import type { TurnReport, TurnSink } from './driver.js';
import { PerTurnDriver, type LineState } from './per-turn-driver.js';

/** What OpenCode may do without asking in each mode (the rest of its defaults stay). */
const PERMISSION: Record<'plan' | 'ask' | 'auto', Record<string, string>> = {
  plan: { 'huddle_*': 'allow' },
  ask: { edit: 'ask', bash: 'ask', webfetch: 'ask', 'huddle_*': 'allow' },
  auto: { 'huddle_*': 'allow' },
};

export class OpenCodeDriver extends PerTurnDriver {
  readonly kind = 'opencode' as const;
  protected override readonly interruptSignal = 'SIGTERM';
  #instructionsFile: string | undefined;
  /** Tokens in its context after the latest step (that step's input, cached or not, and output). */
  #contextTokens: number | undefined;

  /**
   * Its lines name the session only once a step starts: a first turn interrupted (or failed) before
   * that has a session nobody knows of. OpenCode lists its sessions (its data directory is this
   * teammate's own): one made since the turn began is that turn's, and the next turn continues it.
   */
  override async runTurn(text: string, sink: TurnSink, signal: AbortSignal): Promise<TurnReport> {
    const fresh = this.session === undefined;
    const began = Date.now();
    this.#contextTokens = undefined;
    const report = await super.runTurn(text, sink, signal);
    if (fresh && this.session === undefined && report.outcome !== 'end_turn') {
      const id = await this.#sessionSince(began).catch(() => undefined);
      if (id) this.adoptSession(id, sink, report.model);
    }
    return this.#contextTokens === undefined ? report : { ...report, contextTokens: this.#contextTokens };
  }

  /** The newest session made at or after `since` (ms), from `opencode session list --format json`. */
  async #sessionSince(since: number): Promise<string | undefined> {
    const lines: string[] = [];
    const listed = new Promise<void>((resolve) => {
      void AgentProcess.start({
        command: this.setup.command,
        args: ['session', 'list', '--format', 'json', '--max-count', '1'],
        cwd: this.setup.cwd,
        env: { ...this.setup.env, ...this.environment() },
        spawn: this.spawn,
        onJson: () => undefined,
        // A pretty-printed array: no line of it is JSON on its own.
        onText: (line) => void lines.push(line),
        onExit: () => resolve(),
      }).then(
        (started) => started.child.stdin?.end(),
        () => resolve(),
      );
    });
    await listed;
    let sessions: unknown;
    try {
      sessions = JSON.parse(lines.join('\n'));
    } catch {
      return undefined;
    }
    const newest = Array.isArray(sessions) ? (sessions[0] as { id?: unknown; created?: unknown } | undefined) : undefined;
    return typeof newest?.id === 'string' && typeof newest.created === 'number' && newest.created >= since - 1000 ? newest.id : undefined;
  }

  protected argsFor(text: string, session: string | undefined): string[] {
    const mode = this.setup.permissionMode;
    return [
      'run',
      ...this.setup.args,
      '--format',
      'json',
      // A title of its own: else OpenCode asks a small model for one (a request of its own).
      '--title',
      `huddle: ${this.setup.name}`,
      ...(this.#model() ? ['--model', this.#model()!] : []),
      ...(mode === 'plan' ? ['--agent', 'plan'] : []),
      ...(mode === 'auto' ? ['--auto'] : []),
      ...(session ? ['--session', session] : []),
      // After `--`, a text that starts with a dash is the message, not an option.
      '--',
      text,
    ];
  }

  /** huddle's instructions go into its system prompt (its config's `instructions`): the turn is the text alone. */
  protected override firstPrompt(text: string): string {
    return this.#instructions() ? text || '(begin)' : super.firstPrompt(text);
  }

  protected override environment(): Record<string, string> {
    const instructions = this.#instructions();
    const relayKey = this.setup.modelRelayKey;
    const config = {
      autoupdate: false,
      share: 'disabled',
      // Its own undo snapshots (a second git store of the workspace) are for its interactive UI.
      snapshot: false,
      ...(instructions ? { instructions: [instructions] } : {}),
      mcp: { huddle: { type: 'local', command: [this.setup.mcp.command, ...this.setup.mcp.args], enabled: true } },
      permission: PERMISSION[this.setup.permissionMode],
      ...(relayKey ? { provider: { anthropic: { options: { baseURL: '{env:ANTHROPIC_BASE_URL}/v1', apiKey: `{env:${relayKey}}` } } } } : {}),
      ...(relayKey && this.#model() ? { small_model: this.#model() } : {}),
    };
    return { OPENCODE_CONFIG_CONTENT: JSON.stringify(config), OPENCODE_DISABLE_AUTOUPDATE: '1' };
  }

  /** OpenCode names models provider/model; a bare name on huddle's relay is Anthropic's. */
  #model(): string | undefined {
    const model = this.setup.model;
    if (!model) return undefined;
    return model.includes('/') || !this.setup.modelRelayKey ? model : `anthropic/${model}`;
  }

  /** huddle's instructions as a file in its private config directory (none without one: they go with the first turn). */
  #instructions(): string | undefined {
    if (this.#instructionsFile || !this.setup.configDir) return this.#instructionsFile;
    const file = path.join(this.setup.configDir, 'huddle-instructions.md');
    writeFileSync(file, `${this.setup.instructions}\n`, { mode: 0o600 });
    this.#instructionsFile = file;
    return file;
  }

  protected onLine(line: Record<string, unknown>, state: LineState): void {
    if (typeof line.sessionID === 'string') state.session = line.sessionID;
    state.model ??= this.#model();
    const part = (line.part ?? {}) as OpenCodePart;
    switch (line.type) {
      case 'text':
        if (typeof part.text === 'string' && part.text) {
          state.text = state.text ? `${state.text}\n\n${part.text}` : part.text;
          state.sink.text(part.text);
        }
        return;
      case 'tool_use': {
        // One line per finished call: its call and its result at once.
        const id = String(part.callID ?? part.id ?? '');
        const name = String(part.tool ?? '?');
        const call = part.state ?? {};
        state.text = '';
        state.sink.toolCall(id, name, call.input ?? {});
        const failed = call.status === 'error';
        state.sink.toolResult(
          id,
          name,
          !failed,
          failed ? String(call.error ?? 'failed') : typeof call.output === 'string' ? call.output : JSON.stringify(call.output ?? ''),
        );
        return;
      }
      case 'step_finish':
        state.usage = addUsage(state.usage, part.tokens);
        if (part.tokens)
          this.#contextTokens = (part.tokens.input ?? 0) + (part.tokens.cache?.read ?? 0) + (part.tokens.cache?.write ?? 0) + (part.tokens.output ?? 0);
        if (typeof part.cost === 'number') state.costUsd = (state.costUsd ?? 0) + part.cost;
        return;
      case 'error': {
        const error = line.error as { name?: unknown; data?: { message?: unknown } } | undefined;
        state.done = 'error';
        state.error = String(error?.data?.message ?? error?.name ?? 'error');
        return;
      }
      default:
        return;
    }
  }
}

interface OpenCodePart {
  id?: string;
  text?: string;
  tool?: string;
  callID?: string;
  state?: { status?: string; input?: unknown; output?: unknown; error?: unknown };
  tokens?: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
  cost?: number;
}

/** A step's tokens added to the turn's (its reasoning is output, as Anthropic bills it). */
function addUsage(usage: TokenUsage | undefined, tokens: OpenCodePart['tokens']): TokenUsage | undefined {
  if (!tokens) return usage;
  const sum = usage ?? { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  return {
    input_tokens: sum.input_tokens + (tokens.input ?? 0),
    output_tokens: sum.output_tokens + (tokens.output ?? 0) + (tokens.reasoning ?? 0),
    cache_creation_input_tokens: (sum.cache_creation_input_tokens ?? 0) + (tokens.cache?.write ?? 0),
    cache_read_input_tokens: (sum.cache_read_input_tokens ?? 0) + (tokens.cache?.read ?? 0),
  };
}
