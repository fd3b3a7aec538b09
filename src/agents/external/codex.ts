// The Codex CLI as a teammate: `codex exec --json TEXT` per turn, the next turn continuing the
// thread with `codex exec resume <thread id> TEXT`. Its JSON lines are `thread.started`
// (thread_id), `turn.started`, `item.started` / `item.completed` (agent_message, reasoning,
// command_execution, file_change, mcp_tool_call, …), `turn.completed` (usage; no cost),
// `turn.failed` and `error`. huddle's MCP server is given with `-c mcp_servers.huddle.*` (Codex
// reads MCP servers from its config.toml; -c overrides it for this run only; the model sees them
// in a namespace mcp__huddle). Permission modes map to its own sandbox — plan → read-only, ask and
// auto → workspace-write (exec never stops to ask) — where huddle's is not around it; inside
// huddle's (which is read-only in plan mode) its own cannot start (it is bubblewrap or Seatbelt
// too, and a sandbox makes no sandboxes), so it runs its commands as they are: danger-full-access.
//
// Codex starts its MCP servers in the background and sends the first request without waiting for
// them: the model is offered no mcp__huddle tools, and a call of one is answered "unsupported
// call: mcp__huddle…" (0.169.0). huddle's server is therefore `required`: Codex waits for it before
// the first request, and a server that cannot start ends the run with its reason. The version is
// checked once per teammate (`codex --version`): one older than the tested range
// (cli-versions.ts, docs/agent-clis.md) is refused with one line saying what to install.
import { parseVersion, TESTED_VERSIONS, versionVerdict, versionWarning } from './cli-versions.js';
import type { AgentProcess } from './child-process.js';
import { PerTurnDriver, type LineState } from './per-turn-driver.js';

const SANDBOX: Record<'plan' | 'ask' | 'auto', string> = { plan: 'read-only', ask: 'workspace-write', auto: 'workspace-write' };

/** A TOML value for `-c key=value` (JSON strings and arrays of strings are valid TOML). */
function toml(value: string | string[]): string {
  return JSON.stringify(value);
}

export class CodexDriver extends PerTurnDriver {
  readonly kind = 'codex' as const;

  protected argsFor(text: string, session: string | undefined): string[] {
    const options = [
      '--json',
      '--skip-git-repo-check',
      '-c',
      `mcp_servers.huddle.command=${toml(this.setup.mcp.command)}`,
      '-c',
      `mcp_servers.huddle.args=${toml(this.setup.mcp.args)}`,
      // Waited for before the first request (see above), longer than Codex's 10 s on a busy machine.
      '-c',
      'mcp_servers.huddle.required=true',
      '-c',
      'mcp_servers.huddle.startup_timeout_sec=60',
      // huddle's tools run without asking (exec never asks: a call needing approval would fail).
      '-c',
      'mcp_servers.huddle.default_tools_approval_mode="approve"',
      '-c',
      `sandbox_mode=${toml(this.setup.sandboxed?.() ? 'danger-full-access' : SANDBOX[this.setup.permissionMode])}`,
      ...(this.setup.model ? ['-m', this.setup.model] : []),
    ];
    return session ? ['exec', 'resume', ...this.setup.args, ...options, session, text] : ['exec', ...this.setup.args, ...options, '-C', this.setup.cwd, text];
  }

  protected override async preflight(): Promise<string | undefined> {
    const range = TESTED_VERSIONS.codex!;
    const output = await this.probe(['--version']);
    const version = parseVersion(output);
    if (!version)
      return `cannot start a codex teammate: \`${this.setup.command} --version\` printed no version${output.trim() ? ` ("${output.trim().split('\n')[0]!.slice(0, 120)}")` : ''}; huddle drives codex ${range.oldest} or newer (\`npm install -g ${range.package}@${range.tested}\`)`;
    if (versionVerdict(range, version) === 'older') return `cannot start a codex teammate: ${versionWarning('codex', range, version)}`;
    return undefined;
  }

  /** Codex ends a failed run with `Error: …` and then a stack backtrace: the error line is the reason. */
  protected override failureReason(child: AgentProcess): string | undefined {
    const error = /^Error: (.+)$/m.exec(child.stderr)?.[1];
    return error ? error.slice(0, 400) : super.failureReason(child);
  }

  protected onLine(line: Record<string, unknown>, state: LineState): void {
    switch (line.type) {
      case 'thread.started':
        if (typeof line.thread_id === 'string') state.session = line.thread_id;
        return;
      case 'item.started':
        this.#started(line.item as CodexItem | undefined, state);
        return;
      case 'item.completed':
        this.#completed(line.item as CodexItem | undefined, state);
        return;
      case 'turn.completed': {
        state.done = 'success';
        // input_tokens counts the cached and cache-written ones too; huddle's usage counts each once.
        const usage = line.usage as
          { input_tokens?: number; cached_input_tokens?: number; cache_write_input_tokens?: number; output_tokens?: number } | undefined;
        if (usage) {
          const cached = usage.cached_input_tokens ?? 0;
          const written = usage.cache_write_input_tokens ?? 0;
          state.usage = {
            input_tokens: Math.max(0, (usage.input_tokens ?? 0) - cached - written),
            output_tokens: usage.output_tokens ?? 0,
            cache_creation_input_tokens: written,
            cache_read_input_tokens: cached,
          };
          state.costUsd = 0;
        }
        return;
      }
      case 'turn.failed': {
        state.done = 'error';
        const error = line.error as { message?: unknown } | undefined;
        state.error = String(error?.message ?? 'the turn failed');
        return;
      }
      case 'error':
        state.error = String(line.message ?? 'error');
        return;
      default:
        return;
    }
  }

  #started(item: CodexItem | undefined, state: LineState): void {
    if (!item?.id) return;
    const call = toolCallOf(item);
    if (call) {
      state.text = '';
      state.sink.toolCall(item.id, call.name, call.input);
    }
  }

  #completed(item: CodexItem | undefined, state: LineState): void {
    if (!item?.id) return;
    if (item.type === 'error' && typeof item.message === 'string') {
      state.sink.notice(`codex: ${item.message}`);
      return;
    }
    if (item.type === 'agent_message' && typeof item.text === 'string') {
      state.text = item.text;
      state.sink.text(item.text);
      return;
    }
    const call = toolCallOf(item);
    if (!call) return;
    const failed =
      item.status === 'failed' || item.status === 'declined' || (typeof item.exit_code === 'number' && item.exit_code !== 0) || Boolean(item.error?.message);
    state.sink.toolResult(item.id, call.name, !failed, resultOf(item));
  }
}

interface CodexItem {
  id?: string;
  type?: string;
  text?: string;
  command?: string;
  aggregated_output?: string;
  exit_code?: number | null;
  status?: string;
  changes?: Array<{ path?: string; kind?: string }>;
  server?: string;
  tool?: string;
  arguments?: unknown;
  result?: unknown;
  error?: { message?: string } | null;
  query?: string;
  message?: string;
}

/** A Codex item that is a tool call, as huddle names it. */
function toolCallOf(item: CodexItem): { name: string; input: unknown } | undefined {
  switch (item.type) {
    case 'command_execution':
      return { name: 'shell', input: { command: item.command ?? '' } };
    case 'file_change':
      return { name: 'apply_patch', input: { files: (item.changes ?? []).map((c) => `${c.kind ?? 'change'} ${c.path ?? '?'}`).join(', ') } };
    case 'mcp_tool_call':
      return { name: `mcp__${item.server ?? '?'}__${item.tool ?? '?'}`, input: item.arguments ?? {} };
    case 'web_search':
      return { name: 'web_search', input: { query: item.query ?? '' } };
    default:
      return undefined;
  }
}

function resultOf(item: CodexItem): string {
  if (item.error?.message) return item.error.message;
  if (item.type === 'command_execution') return item.aggregated_output ?? '';
  if (item.type === 'file_change') return (item.changes ?? []).map((c) => `${c.kind ?? 'change'} ${c.path ?? '?'}`).join('\n');
  if (item.result === undefined) return '';
  const result = item.result as { content?: Array<{ type?: string; text?: string }> };
  if (Array.isArray(result.content))
    return result.content.map((block) => (block.type === 'text' ? (block.text ?? '') : `[${block.type ?? 'content'}]`)).join('\n');
  return JSON.stringify(item.result);
}
