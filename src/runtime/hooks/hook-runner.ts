// Runs the hooks configured for an event (docs/contract.md#hooks): every matching command at once, each
// with the event as JSON on stdin, in the agent's workspace, through the injectable spawn (the
// sandbox), with its timeout ending its whole process tree. The result is one outcome the caller
// acts on (block the call, keep the task open, add context, stop) plus a record for the agent's log.
// A hook's own failure is reported in the outcome, never thrown.
import type { EventFields } from '../events/event-types.js';
import type { SpawnLike } from '../process/spawn.js';
import { childEnvironment } from '../process/spawn.js';
import { runCommand } from '../process/run-command.js';
import type { HooksSettings } from '../settings/schema.js';
import { matchTarget, type HookEventInput, type HookEventName, type HookInput } from './hook-events.js';
import { readHookOutcome, type PermissionDecision } from './hook-output.js';
import { compileMatcher, MatcherError, type Matcher } from './matcher.js';
import { scrubStrings } from '../secrets.js';
import { claudeCodeToolName, fromClaudeCodeInput, toClaudeCodeCall } from '../vocabulary.js';

export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;
/** Kept of each stream per run: hooks talk in lines, not pages. */
const HOOK_OUTPUT_CHARS = 10_000;

export interface HookRunnerOptions {
  hooks: HooksSettings | undefined;
  /** The team's session id (Claude Code's `session_id`). */
  sessionId: string;
  /** The workspace root: `$CLAUDE_PROJECT_DIR` / `$HUDDLE_PROJECT_DIR` for every hook. */
  projectDir: string;
  spawn?: SpawnLike;
  /** Base environment (default: huddle's, less its secrets). */
  env?: Record<string, string>;
}

export interface HookRunContext {
  agent: string;
  /** The agent's workspace (its worktree, for a worktree teammate): the hook's cwd. */
  cwd: string;
  signal?: AbortSignal;
  permissionMode?: string;
}

export interface HookRunRecord {
  command: string;
  status: 'ok' | 'blocked' | 'failed';
  exitCode: number | undefined;
  durationMs: number;
  /** Why it blocked or failed. */
  reason?: string;
}

export interface HookOutcome {
  event: HookEventName;
  /** Whether any hook ran. */
  ran: boolean;
  /** The event is refused (see BLOCKING_EFFECT for what that means per event). */
  blocked: boolean;
  /** The reasons of every blocking hook, joined. */
  reason?: string;
  /** PreToolUse: the strongest decision of all hooks (deny > ask > allow). */
  permissionDecision?: PermissionDecision;
  permissionDecisionReason?: string;
  /** PreToolUse: the tool input a hook asked to use instead. */
  updatedInput?: Record<string, unknown>;
  /** Context for the model (SessionStart, UserPromptSubmit, PostToolUse…), joined. */
  additionalContext?: string;
  /** A hook asked the agent to stop (`"continue": false`); the reason is for the person. */
  stop?: string;
  /** For the person: hook failures and systemMessages, one line each. Emit them as warnings. */
  messages: string[];
  runs: HookRunRecord[];
}

/** Whose words a hook's stdin uses: huddle's tool names and fields, or Claude Code's (docs/hooks.md#vocabulary). */
type Vocabulary = 'huddle' | 'claude-code';

interface CompiledHook {
  command: string;
  timeoutSeconds: number;
  vocabulary: Vocabulary;
}

interface CompiledMatcher {
  matches: Matcher;
  hooks: CompiledHook[];
}

export class HookRunner {
  readonly #options: HookRunnerOptions;
  readonly #compiled = new Map<HookEventName, CompiledMatcher[]>();
  /** Broken matchers, said once per runner (not once per tool call). */
  readonly #configErrors: string[] = [];

  constructor(options: HookRunnerOptions) {
    this.#options = options;
    for (const [event, matchers] of Object.entries(options.hooks ?? {}) as Array<[HookEventName, NonNullable<HooksSettings[HookEventName]>]>) {
      const compiled: CompiledMatcher[] = [];
      matchers.forEach((matcher, index) => {
        try {
          const hooks = matcher.hooks.map((hook) => ({
            command: hook.command,
            timeoutSeconds: hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS,
            vocabulary: hook.vocabulary ?? 'huddle',
          }));
          compiled.push({ matches: compileMatcher(matcher.matcher), hooks });
        } catch (error) {
          if (!(error instanceof MatcherError)) throw error;
          this.#configErrors.push(`hooks.${event}[${index}]: ${error.message}; its hooks never run`);
        }
      });
      this.#compiled.set(event, compiled);
    }
  }

  /** Problems found in the hook settings (a broken regex), for one warning each at start. */
  get configErrors(): readonly string[] {
    return this.#configErrors;
  }

  /** Whether any hook is configured for the event (callers may skip building its input). */
  has(event: HookEventName): boolean {
    return (this.#compiled.get(event)?.length ?? 0) > 0;
  }

  async run(input: HookEventInput, context: HookRunContext): Promise<HookOutcome> {
    const event = input.hook_event_name;
    const target = matchTarget(input);
    const seen = new Set<string>();
    const hooks: CompiledHook[] = [];
    for (const matcher of this.#compiled.get(event) ?? []) {
      if (!matcher.matches(target) && target !== undefined) continue;
      for (const hook of matcher.hooks) {
        // The same command configured twice (user and team files) runs once.
        if (seen.has(hook.command)) continue;
        seen.add(hook.command);
        hooks.push(hook);
      }
    }
    const outcome: HookOutcome = { event, ran: hooks.length > 0, blocked: false, messages: [], runs: [] };
    if (!hooks.length) return outcome;

    const payload: HookInput = {
      session_id: this.#options.sessionId,
      cwd: context.cwd,
      agent: context.agent,
      ...(context.permissionMode ? { permission_mode: context.permissionMode } : {}),
      ...input,
    };
    const stdin: Record<Vocabulary, string> = {
      huddle: `${JSON.stringify(payload)}\n`,
      'claude-code': `${JSON.stringify(inClaudeCodeWords(payload))}\n`,
    };
    const env = {
      ...(this.#options.env ?? childEnvironment()),
      CLAUDE_PROJECT_DIR: this.#options.projectDir,
      HUDDLE_PROJECT_DIR: this.#options.projectDir,
      HUDDLE_AGENT: context.agent,
      HUDDLE_HOOK_EVENT: event,
    };
    const verdicts = await Promise.all(
      hooks.map(async (hook) => {
        const result = await runCommand({
          command: hook.command,
          cwd: context.cwd,
          env,
          input: stdin[hook.vocabulary],
          timeoutMs: hook.timeoutSeconds * 1000,
          maxChars: HOOK_OUTPUT_CHARS,
          ...(context.signal ? { signal: context.signal } : {}),
          ...(this.#options.spawn ? { spawn: this.#options.spawn } : {}),
        });
        const verdict = readHookOutcome(event, result, hook.timeoutSeconds);
        // An input changed in Claude Code's words goes back into huddle's fields.
        if (verdict.updatedInput && hook.vocabulary === 'claude-code' && 'tool_name' in input)
          verdict.updatedInput = fromClaudeCodeInput(claudeCodeToolName(input.tool_name), verdict.updatedInput);
        return { hook, result, verdict };
      }),
    );

    const reasons: string[] = [];
    const contexts: string[] = [];
    for (const { hook, result, verdict } of verdicts) {
      const record: HookRunRecord = { command: hook.command, status: verdict.status, exitCode: result.exitCode, durationMs: result.durationMs };
      if (verdict.reason) record.reason = verdict.reason;
      outcome.runs.push(record);
      if (verdict.status === 'blocked') reasons.push(verdict.reason ?? `a ${event} hook blocked this`);
      if (verdict.status === 'failed') outcome.messages.push(`${event} hook '${oneLine(hook.command)}' failed: ${verdict.reason}`);
      if (verdict.systemMessage) outcome.messages.push(verdict.systemMessage);
      if (verdict.additionalContext) contexts.push(verdict.additionalContext);
      if (verdict.stop && outcome.stop === undefined) outcome.stop = verdict.stop;
      if (verdict.updatedInput && outcome.updatedInput === undefined) outcome.updatedInput = verdict.updatedInput;
      if (verdict.permissionDecision && rank(verdict.permissionDecision) > rank(outcome.permissionDecision)) {
        outcome.permissionDecision = verdict.permissionDecision;
        if (verdict.permissionDecisionReason) outcome.permissionDecisionReason = verdict.permissionDecisionReason;
        else delete outcome.permissionDecisionReason;
      }
    }
    if (reasons.length) {
      outcome.blocked = true;
      outcome.reason = reasons.join('\n');
    }
    if (contexts.length) outcome.additionalContext = contexts.join('\n');
    // A hook's words reach the model and the screen: no registered secret in them (docs/trust.md).
    return scrubStrings(outcome);
  }
}

/** Claude Code's permission modes for huddle's (what a Claude Code hook compares `permission_mode` with). */
const CLAUDE_CODE_MODES: Record<string, string> = { ask: 'default', auto: 'bypassPermissions', plan: 'plan' };

/** The payload as Claude Code would send it: `Write {file_path}` for `write_file {path}`, its mode names. */
function inClaudeCodeWords(payload: HookInput): Record<string, unknown> {
  const out: Record<string, unknown> = { ...payload };
  if (payload.permission_mode) out.permission_mode = CLAUDE_CODE_MODES[payload.permission_mode] ?? payload.permission_mode;
  if (payload.hook_event_name === 'PreToolUse' || payload.hook_event_name === 'PostToolUse') {
    const call = toClaudeCodeCall(payload.tool_name, payload.tool_input, payload.cwd);
    out.tool_name = call.name;
    out.tool_input = call.input;
  }
  return out;
}

function rank(decision: PermissionDecision | undefined): number {
  return decision === 'deny' ? 3 : decision === 'ask' ? 2 : decision === 'allow' ? 1 : 0;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}

/**
 * The outcome as the fields of a `hook` event in the agent's log. Commands are shown, their output
 * is not: a hook's output may hold what it was meant to keep out of the logs.
 */
export function hookEventFields(outcome: HookOutcome): EventFields['hook'] {
  return {
    hook_event_name: outcome.event,
    blocked: outcome.blocked,
    ...(outcome.reason ? { reason: outcome.reason } : {}),
    ...(outcome.permissionDecision ? { permission_decision: outcome.permissionDecision } : {}),
    ...(outcome.stop ? { stop: outcome.stop } : {}),
    runs: outcome.runs.map((run) => ({
      command: run.command,
      status: run.status,
      exit_code: run.exitCode ?? null,
      duration_ms: run.durationMs,
      ...(run.reason ? { reason: run.reason } : {}),
    })),
  };
}
