// What the command line asks for, parsed by cli.ts and read by the faces and the session core.
// Kept apart from cli.ts so that the faces import it without importing the entry point.
import type { PermissionMode } from '../runtime/permissions/permission-mode.js';
import type { SettingsFlags } from '../runtime/settings/flags.js';

export interface CliOptions {
  /** The console works through this backlog (`huddle --backlog SOURCE`, docs/backlog.md#in-the-console). */
  backlog?: { source: string; base?: string | undefined; githubApiUrl?: string | undefined; prRepo?: string | undefined; verify?: string | undefined };
  prompt: string | undefined;
  json: boolean;
  resume: boolean;
  fresh: boolean;
  cwd: string | undefined;
  model: string | undefined;
  apiKeyFile: string | undefined;
  maxTurns: number | undefined;
  permissionMode?: PermissionMode | undefined;
  /** --budget-usd / --budget-minutes / --budget-turns: the team's hard limits. */
  budget?: { usd?: number; minutes?: number; turns?: number };
  command: string | undefined;
  /** --team URL: the team's state in PostgreSQL (docs/contract.md#command-line). */
  team?: string | undefined;
  /** `huddle worker --slots N`: how many teammates this host runs at once. */
  slots?: number | undefined;
  // ---- headless output and input (docs/contract.md#headless-output) ----
  /** --output-format: `text` (the lead's final text), `json` (one result object), `stream-json` (Claude Code's line format). */
  outputFormat?: OutputFormat;
  /** Where the prompt came from: `-p TEXT`, stdin (`-p` / `-p -`), or `--prompt-file F`. */
  promptSource?: 'argument' | 'stdin' | 'file' | 'stream';
  /** --prompt-file's path (the prompt itself is in `prompt` once read). */
  promptFile?: string;
  /** --trust: trust the workspace's settings files as they are now, and record it (docs/trust.md). */
  trust?: boolean;
  // ---- Claude Code's flags (docs/contract.md#claude-code-flags) ----
  /** --input-format stream-json: user messages and control requests on stdin (the Agent SDK's protocol). */
  inputFormat?: 'text' | 'stream-json';
  /** --include-partial-messages: `stream_event` lines as the lead's text arrives. */
  includePartialMessages?: boolean;
  /** --session-id: the session's id (a UUID) instead of a new one. */
  sessionId?: string;
  /** --resume ID: the session to continue (the team left in the workspace, if it is that session). */
  resumeId?: string;
  /** --fork-session: with --resume/--continue, a new session id for the continued team. */
  forkSession?: boolean;
  /** --system-prompt / --append-system-prompt: the lead's instructions replaced, or added to. */
  systemPrompt?: string;
  appendSystemPrompt?: string;
  /** --permission-prompt-tool stdio: questions go to the caller as can_use_tool control requests. */
  permissionPromptTool?: 'stdio';
  /** --allowedTools 'Bash(git *)': command prefixes allowed without a question for this run. */
  allowedCommands?: string[];
  /** The mode as the caller named it (Claude Code's name, shown back in the init line). */
  permissionModeName?: string;
  /** --disallowedTools: deny rules for this run (Claude Code's syntax), over every settings file. */
  disallowedTools?: string[];
  /** --settings FILE|JSON: Claude Code's settings for this run, over every settings file. */
  settings?: { label: string; values: unknown };
  /** --setting-sources: the scopes of settings files read (huddle's and Claude Code's). */
  settingSources?: Array<'user' | 'project' | 'local'>;
  /** --mcp-config: MCP servers for this run (Claude Code's .mcp.json format), by the file or JSON they came from. */
  mcpConfig?: Array<{ label: string; servers: Record<string, unknown> }>;
  /** Plan approval and review rounds chosen by a face (a backlog run's playbook and --plan-approval), over the settings files. */
  runChoices?: SettingsFlags['runChoices'];
  /** --strict-mcp-config: only --mcp-config's servers (not .mcp.json's, not the settings'). */
  strictMcpConfig?: boolean;
  /** --fallback-model: used once the model stays overloaded (529) after every retry. */
  fallbackModel?: string;
}

export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
