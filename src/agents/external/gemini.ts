// The Gemini CLI as a teammate: `gemini -p TEXT --output-format stream-json` per turn, the next
// turn continuing the session with `--resume <session id>`. Its stream-json lines are `init`
// (session_id, model), `message` (assistant text, in deltas), `tool_use`, `tool_result`, `error`
// and `result` (status, token stats; no cost). It reads MCP servers from its settings: huddle's
// server is given through a system settings file of its own (GEMINI_CLI_SYSTEM_SETTINGS_PATH, in
// the teammate's private config directory, which is also its GEMINI_CLI_HOME), so the project's
// and the user's .gemini/ stay untouched. Its MCP tools are named mcp_huddle_<tool>. Permission modes: plan → plan, ask →
// default (tools that need approval are refused without a person), auto → yolo.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerTurnDriver, type LineState } from './per-turn-driver.js';

const APPROVAL: Record<'plan' | 'ask' | 'auto', string> = { plan: 'plan', ask: 'default', auto: 'yolo' };

export class GeminiDriver extends PerTurnDriver {
  readonly kind = 'gemini' as const;
  #settingsFile: string | undefined;
  /** A directory this driver made for its settings (when it has no config directory), removed on close. */
  #madeDir: string | undefined;

  protected argsFor(text: string, session: string | undefined): string[] {
    return [
      ...this.setup.args,
      '--output-format',
      'stream-json',
      '--approval-mode',
      APPROVAL[this.setup.permissionMode],
      '--allowed-mcp-server-names',
      'huddle',
      '--skip-trust',
      ...(this.setup.model ? ['--model', this.setup.model] : []),
      ...(session ? ['--resume', session] : []),
      '--prompt',
      text,
    ];
  }

  protected override environment(): Record<string, string> {
    // Every turn is a new process: the CLI's relaunch of itself (only to raise node's heap limit)
    // would start node twice per turn. The person's own setting of it wins.
    const env: Record<string, string> = { GEMINI_CLI_SYSTEM_SETTINGS_PATH: this.#settings() };
    if (this.setup.env.GEMINI_CLI_NO_RELAUNCH === undefined) env.GEMINI_CLI_NO_RELAUNCH = 'true';
    return env;
  }

  /**
   * huddle's MCP server, trusted (its tools need no confirmation), in a file only this agent reads:
   * in its private config directory (Gemini refuses a system settings file whose directories
   * others may write, such as the temp dir), else in a private directory of the user's cache.
   */
  #settings(): string {
    if (this.#settingsFile) return this.#settingsFile;
    let dir = this.setup.configDir;
    if (!dir) {
      const env = this.setup.env;
      const base = path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache'), 'huddle', 'gemini');
      mkdirSync(base, { recursive: true, mode: 0o700 });
      dir = this.#madeDir = mkdtempSync(path.join(base, `${this.setup.name}-`));
    }
    const file = path.join(dir, 'huddle-system-settings.json');
    const settings = { mcpServers: { huddle: { command: this.setup.mcp.command, args: this.setup.mcp.args, trust: true } } };
    writeFileSync(file, JSON.stringify(settings, null, 2), { mode: 0o600 });
    if (this.setup.configDir) seedUserSettings(this.setup.configDir, this.setup.env);
    this.#settingsFile = file;
    return file;
  }

  override async close(): Promise<void> {
    await super.close();
    if (this.#madeDir) rmSync(this.#madeDir, { recursive: true, force: true });
    this.#madeDir = undefined;
    this.#settingsFile = undefined;
  }

  protected onLine(line: Record<string, unknown>, state: LineState): void {
    switch (line.type) {
      case 'init':
        if (typeof line.session_id === 'string') state.session = line.session_id;
        if (typeof line.model === 'string') state.model = line.model;
        return;
      case 'message':
        if (line.role === 'assistant' && typeof line.content === 'string') {
          state.text += line.content;
          state.sink.text(line.content);
        }
        return;
      case 'tool_use':
        state.sink.toolCall(String(line.tool_id ?? ''), String(line.tool_name ?? '?'), line.parameters ?? {});
        state.text = '';
        return;
      case 'tool_result': {
        const error = line.error as { message?: unknown } | undefined;
        const content = typeof line.output === 'string' ? line.output : error?.message !== undefined ? String(error.message) : '';
        state.sink.toolResult(String(line.tool_id ?? ''), '', line.status !== 'error', content);
        return;
      }
      case 'error':
        if (line.severity === 'error') state.error = String(line.message ?? 'error');
        else state.sink.notice(`gemini: ${String(line.message ?? 'warning')}`);
        return;
      case 'result': {
        state.done = line.status === 'success' ? 'success' : 'error';
        const error = line.error as { message?: unknown } | undefined;
        if (error?.message !== undefined) state.error = String(error.message);
        const stats = line.stats as { input_tokens?: number; output_tokens?: number; cached?: number } | undefined;
        if (stats) {
          const cached = stats.cached ?? 0;
          state.usage = {
            input_tokens: Math.max(0, (stats.input_tokens ?? 0) - cached),
            output_tokens: stats.output_tokens ?? 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cached,
          };
          // The CLI reports no price; huddle's price table knows only Anthropic's models.
          state.costUsd = 0;
        }
        return;
      }
      default:
        return;
    }
  }
}

/**
 * A fresh private GEMINI_CLI_HOME has no settings, and Gemini run non-interactively will not pick
 * its way of signing in by itself ("Invalid auth method selected"). The only ways that work in the
 * sandbox are those its environment carries (your ~/.gemini credentials are not there): an API
 * key, or Vertex AI. Written once, when missing; the person may change it there.
 */
function seedUserSettings(home: string, env: Record<string, string>): void {
  const selectedType = /^(true|1)$/i.test(env.GOOGLE_GENAI_USE_VERTEXAI ?? '') ? 'vertex-ai' : env.GEMINI_API_KEY ? 'gemini-api-key' : undefined;
  const file = path.join(home, '.gemini', 'settings.json');
  if (!selectedType || existsSync(file)) return;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify({ security: { auth: { selectedType } } }, null, 2)}\n`, { mode: 0o600 });
}
