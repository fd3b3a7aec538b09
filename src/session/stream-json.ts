// `--output-format stream-json` and `json` (docs/contract.md#headless-output): huddle's events as Claude
// Code's headless line format, so a script written for `claude -p --output-format stream-json`
// runs unchanged. A view of the events, like `--json` and the run record:
//   {"type":"system","subtype":"init",…}           first, once the session is open
//   {"type":"assistant","message":{…}}             one line per content block of a lead response
//                                                  (as Claude Code writes them: same message id)
//   {"type":"user","message":{"role":"user","content":[tool_result]}}   each tool result
//   {"type":"result","subtype":"success"|"error_…",…}                   last
// Tools are named as Claude Code names them, with its input fields (`Bash {command}`, `Write {file_path,
// content}`; vocabulary.ts), and each tool result's user line carries `tool_use_result` in its shape.
// Teammates' lines follow the same shape with `agent` naming them and `parent_tool_use_id` set
// to the lead's spawn_teammate call that started them (Claude Code's convention for subagents):
// a script that reads only the main thread keeps the lines whose parent_tool_use_id is null.
// A subagent's lines (docs/contract.md#subagents) carry its parent's `agent`, its own `subagent` id and
// `parent_tool_use_id` = the parent's explore call.
import { randomUUID } from 'node:crypto';
import type { HuddleEvent } from '../runtime/events/events.js';
import { claudeCodeToolName, LEAD_NAME, toClaudeCodeCall } from '../runtime/vocabulary.js';

export interface InitInfo {
  sessionId: string;
  cwd: string;
  model: string;
  tools: string[];
  permissionMode: string;
  apiKeySource: string | undefined;
  version: string;
  /** The session's MCP servers and their states (Claude Code's `mcp_servers`). */
  mcpServers?: Array<{ name: string; status: string }>;
}

/** An MCP server's state in Claude Code's words (`mcp_servers[].status`). */
export function claudeMcpStatus(state: string): string {
  return state === 'ready' ? 'connected' : state === 'starting' || state === 'restarting' ? 'pending' : 'failed';
}

export type ResultSubtype = 'success' | 'error_max_turns' | 'error_max_budget_usd' | 'error_during_execution';

export interface ResultInfo {
  subtype: ResultSubtype;
  result: string;
  durationMs: number;
  totalCostUsd: number;
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
  /** huddle's own: exit code and why. */
  exitCode: number;
  reason?: string;
  /** A backlog run's issues, as in the run record (docs/backlog.md#the-record). */
  backlog?: unknown[];
}

type Line = Record<string, unknown>;

/** A tool result that is a permission refusal (runtime/permissions/guarded-tools.ts words them). */
const DENIED = /the person denied this \(|needs approval[^]*which a headless run cannot ask for|\(permissions\.deny\) forbids/;

/** Claude Code counts a turn per model response of the main thread. */
export class StreamJsonView {
  readonly sessionId: string;
  readonly #write: (line: Line) => void;
  /** When false (`--output-format json`), nothing is written until the result. */
  readonly #stream: boolean;
  #numTurns = 0;
  #apiMs = 0;
  #lastRequestAt = new Map<string, number>();
  #stopReason: string | null = null;
  /** Per model, as Claude Code's `modelUsage`. */
  readonly #modelUsage: Record<
    string,
    { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number; costUSD: number }
  > = {};
  /** Requests the person (or nobody) denied: Claude Code's `permission_denials`. */
  readonly #denials: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown }> = [];
  /** Each tool call's name and input in Claude Code's words, by id: what a denial and a result report. */
  readonly #calls = new Map<string, { name: string; input: unknown }>();
  /** The workspace: relative paths become absolute `file_path`s against it. */
  #cwd = process.cwd();
  /** The current response of each agent: its id, model and usage (stream-json's message envelope). */
  readonly #response = new Map<string, { id: string; model: string; usage: Line }>();
  /** Teammate name → the lead's spawn_teammate tool_use id that started it. */
  readonly #spawnedBy = new Map<string, string>();
  readonly #pendingSpawns = new Map<string, string>();
  /** Subagent id → its parent and the parent's explore tool_use id (docs/contract.md#subagents). */
  readonly #nested = new Map<string, { parent: string; toolUseId: string }>();

  /** --include-partial-messages: each text block also as Anthropic stream events (`stream_event` lines). */
  readonly #partial: boolean;

  constructor(options: { write: (line: Line) => void; stream: boolean; sessionId?: string; partial?: boolean }) {
    this.#write = options.write;
    this.#stream = options.stream;
    this.#partial = options.partial ?? false;
    this.sessionId = options.sessionId ?? randomUUID();
  }

  init(info: Omit<InitInfo, 'sessionId'>): void {
    this.#cwd = info.cwd;
    if (!this.#stream) return;
    this.#write({
      type: 'system',
      subtype: 'init',
      cwd: info.cwd,
      session_id: this.sessionId,
      tools: info.tools.map(claudeCodeToolName),
      mcp_servers: info.mcpServers ?? [],
      model: info.model,
      permissionMode: info.permissionMode,
      apiKeySource: info.apiKeySource ?? 'none',
      huddle_version: info.version,
      uuid: randomUUID(),
    });
  }

  /** Every event of the session (subscribe it to the hub). */
  readonly onEvent = (event: HuddleEvent): void => {
    // A subagent's lines are its own conversation, nested under the parent's explore call.
    const agent = event.subagent ?? event.agent;
    if (event.subagent !== undefined && event.parent_tool_use_id !== undefined && !this.#nested.has(event.subagent))
      this.#nested.set(event.subagent, { parent: event.agent, toolUseId: event.parent_tool_use_id });
    switch (event.type) {
      case 'prompt':
        this.#lastRequestAt.set(agent, Date.parse(event.ts));
        return;
      case 'tool_result': {
        this.#lastRequestAt.set(agent, Date.parse(event.ts));
        // Refused for want of a permission: denied by whoever answered, or with nobody to ask (headless).
        const call = this.#calls.get(event.id);
        if (call && !event.ok && DENIED.test(String(event.content)))
          this.#denials.push({ tool_name: call.name, tool_use_id: event.id, tool_input: call.input });
        if (agent === LEAD_NAME && event.name === 'spawn_teammate') {
          const name = this.#pendingSpawns.get(event.id);
          if (name && event.ok) this.#spawnedBy.set(name, event.id);
        }
        this.#emit(agent, {
          type: 'user',
          message: { role: 'user', content: [{ tool_use_id: event.id, type: 'tool_result', content: event.content, is_error: !event.ok }] },
          tool_use_result: toolUseResult(call, event.content, event.ok),
        });
        return;
      }
      case 'usage': {
        const model = (this.#modelUsage[event.model] ??= { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD: 0 });
        model.inputTokens += event.input_tokens;
        model.outputTokens += event.output_tokens;
        model.cacheReadInputTokens += event.cache_read_input_tokens;
        model.cacheCreationInputTokens += event.cache_creation_input_tokens;
        model.costUSD += event.cost_usd;
        if (event.purpose === 'compaction' || event.partial) return;
        if (agent === LEAD_NAME) {
          this.#numTurns += 1;
          this.#stopReason = event.stop_reason ?? null;
        }
        const started = this.#lastRequestAt.get(agent);
        if (started !== undefined) this.#apiMs += Math.max(0, Date.parse(event.ts) - started);
        this.#response.set(agent, {
          id: event.message_id ?? `msg_huddle_${randomUUID()}`,
          model: event.model,
          usage: {
            input_tokens: event.input_tokens,
            output_tokens: event.output_tokens,
            cache_creation_input_tokens: event.cache_creation_input_tokens,
            cache_read_input_tokens: event.cache_read_input_tokens,
          },
        });
        return;
      }
      case 'text_delta':
        if (this.#partial) this.#delta(agent, event.text);
        return;
      case 'text':
        if (this.#partial) this.#streamEvents(agent, event.text);
        this.#assistant(agent, { type: 'text', text: event.text });
        return;
      case 'tool_call': {
        const call = toClaudeCodeCall(event.name, event.input ?? {}, this.#cwd);
        this.#calls.set(event.id, call);
        if (agent === LEAD_NAME && event.name === 'spawn_teammate') {
          const name = (event.input as { name?: unknown } | undefined)?.name;
          if (typeof name === 'string') this.#pendingSpawns.set(event.id, name);
        }
        this.#assistant(agent, { type: 'tool_use', id: event.id, name: call.name, input: call.input });
        return;
      }
      default:
        return;
    }
  };

  /** The last line (`stream-json`), or the only one (`json`). */
  result(info: ResultInfo): Line {
    const line: Line = {
      type: 'result',
      subtype: info.subtype,
      is_error: info.subtype !== 'success',
      duration_ms: info.durationMs,
      duration_api_ms: this.#apiMs,
      num_turns: this.#numTurns,
      result: info.result,
      stop_reason: this.#stopReason,
      session_id: this.sessionId,
      total_cost_usd: info.totalCostUsd,
      usage: info.usage,
      modelUsage: this.#modelUsage,
      permission_denials: this.#denials,
      exit_code: info.exitCode,
      ...(info.reason ? { reason: info.reason } : {}),
      ...(info.backlog ? { backlog: info.backlog } : {}),
      // Claude Code's error results list what went wrong (the Agent SDK reads it).
      ...(info.subtype !== 'success' ? { errors: [info.reason ?? info.subtype] } : {}),
      uuid: randomUUID(),
    };
    this.#write(line);
    // Claude Code counts num_turns per user turn (a result each with stream-json input); cost and API time add up.
    this.#numTurns = 0;
    return line;
  }

  /** Agents whose text block is streaming now (its start sent, its stop not yet). */
  readonly #streaming = new Set<string>();

  /** A piece of text as it arrives: the Messages API's stream events (`--include-partial-messages`). */
  #delta(agent: string, text: string): void {
    if (!this.#streaming.has(agent)) {
      this.#streaming.add(agent);
      this.#emit(agent, {
        type: 'stream_event',
        event: {
          type: 'message_start',
          message: {
            id: `msg_huddle_${randomUUID()}`,
            type: 'message',
            role: 'assistant',
            model: this.#response.get(agent)?.model ?? '',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: {},
          },
        },
      });
      this.#emit(agent, { type: 'stream_event', event: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } });
    }
    this.#emit(agent, { type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } });
  }

  /** The block is whole: its stream ends (a block that came without deltas streams as one). */
  #streamEvents(agent: string, text: string): void {
    if (!this.#streaming.has(agent)) this.#delta(agent, text);
    this.#streaming.delete(agent);
    this.#emit(agent, { type: 'stream_event', event: { type: 'content_block_stop', index: 0 } });
    this.#emit(agent, { type: 'stream_event', event: { type: 'message_stop' } });
  }

  #assistant(agent: string, block: Line): void {
    const response = this.#response.get(agent);
    this.#line(agent, 'assistant', {
      id: response?.id ?? `msg_huddle_${randomUUID()}`,
      type: 'message',
      role: 'assistant',
      model: response?.model ?? '',
      content: [block],
      stop_reason: null,
      stop_sequence: null,
      usage: response?.usage ?? {},
    });
  }

  #line(agent: string, type: 'assistant' | 'user', message: Line): void {
    this.#emit(agent, { type, message });
  }

  #emit(agent: string, body: Line): void {
    if (!this.#stream) return;
    const nested = this.#nested.get(agent);
    if (nested) {
      this.#write({ ...body, parent_tool_use_id: nested.toolUseId, agent: nested.parent, subagent: agent, session_id: this.sessionId, uuid: randomUUID() });
      return;
    }
    const lead = agent === LEAD_NAME;
    if (!lead && !this.#spawnedBy.has(agent) && !this.#response.has(agent)) return; // not an agent's conversation
    this.#write({
      ...body,
      parent_tool_use_id: lead ? null : (this.#spawnedBy.get(agent) ?? null),
      ...(lead ? {} : { agent }),
      session_id: this.sessionId,
      uuid: randomUUID(),
    });
  }
}

/**
 * A user line's `tool_use_result`, in the shape Claude Code gives each tool's: the command's output,
 * the file written or edited, the file read; an error as its text; any other tool's result as its text.
 */
function toolUseResult(call: { name: string; input: unknown } | undefined, content: unknown, ok: boolean): unknown {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  if (!ok) return `Error: ${text}`;
  const input = (call?.input ?? {}) as Record<string, unknown>;
  switch (call?.name) {
    case 'Bash':
      return { stdout: text, stderr: '', interrupted: false, isImage: false };
    case 'Write':
      return { type: 'create', filePath: input.file_path, content: input.content };
    case 'Edit':
      return { filePath: input.file_path, oldString: input.old_string, newString: input.new_string, replaceAll: false };
    case 'Read':
      return { type: 'text', file: { filePath: input.file_path, content: text } };
    default:
      return text;
  }
}
