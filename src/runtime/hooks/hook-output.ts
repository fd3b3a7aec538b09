// What one hook run says, read as Claude Code reads it: exit 0 continues (stdout may be JSON with a
// decision, or plain text that becomes context for some events); exit 2 blocks where the event can
// be blocked, with stderr as the reason (stdout ignored); any other exit is the hook's own failure,
// reported and never fatal.
import type { CommandOutcome } from '../process/run-command.js';
import { canBlock, type HookEventName } from './hook-events.js';

export type PermissionDecision = 'allow' | 'deny' | 'ask';

export interface HookVerdict {
  status: 'ok' | 'blocked' | 'failed';
  /** Why it blocked (for the model or the person), or why it failed. */
  reason?: string;
  permissionDecision?: PermissionDecision;
  permissionDecisionReason?: string;
  updatedInput?: Record<string, unknown>;
  additionalContext?: string;
  /** `"continue": false`: the agent stops after this; the reason is for the person. */
  stop?: string;
  /** `systemMessage`: shown to the person. */
  systemMessage?: string;
}

/** Plain stdout of a successful hook becomes context for these events (as in Claude Code). */
const STDOUT_IS_CONTEXT = new Set<HookEventName>(['UserPromptSubmit', 'SessionStart']);

export function readHookOutcome(event: HookEventName, outcome: CommandOutcome, timeoutSeconds: number): HookVerdict {
  if (outcome.startError !== undefined) return { status: 'failed', reason: `could not start (${outcome.startError})` };
  if (outcome.timedOut) return { status: 'failed', reason: `timed out after ${timeoutSeconds} s and was killed` };
  if (outcome.aborted) return { status: 'failed', reason: 'interrupted' };
  const stderr = outcome.stderr.trim();
  if (outcome.exitCode === 2) {
    const reason = stderr || `a hook for ${event} exited 2 without saying why on stderr`;
    return canBlock(event) ? { status: 'blocked', reason } : { status: 'failed', reason: `exit 2 (${event} cannot be blocked): ${reason}` };
  }
  if (outcome.exitCode !== 0) {
    const how = outcome.exitCode === undefined ? `killed by ${outcome.signal ?? 'a signal'}` : `exit ${outcome.exitCode}`;
    return { status: 'failed', reason: stderr ? `${how}: ${firstLine(stderr)}` : how };
  }
  const stdout = outcome.stdout.trim();
  const json = stdout.startsWith('{') ? parseObject(stdout) : undefined;
  if (!json) return STDOUT_IS_CONTEXT.has(event) && stdout ? { status: 'ok', additionalContext: stdout } : { status: 'ok' };
  return readJsonOutput(event, json);
}

function readJsonOutput(event: HookEventName, json: Record<string, unknown>): HookVerdict {
  const verdict: HookVerdict = { status: 'ok' };
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
  const specific = isObject(json.hookSpecificOutput) ? json.hookSpecificOutput : {};

  if (json.continue === false) verdict.stop = text(json.stopReason) ?? `a ${event} hook asked to stop`;
  const systemMessage = text(json.systemMessage);
  if (systemMessage) verdict.systemMessage = systemMessage;
  const context = text(specific.additionalContext);
  if (context) verdict.additionalContext = context;

  if (event === 'PreToolUse') {
    // The newer hookSpecificOutput wins over the older top-level decision (approve/block).
    const decision = specific.permissionDecision ?? (json.decision === 'approve' ? 'allow' : json.decision === 'block' ? 'deny' : undefined);
    if (decision === 'allow' || decision === 'deny' || decision === 'ask') {
      verdict.permissionDecision = decision;
      const reason = text(specific.permissionDecisionReason) ?? text(json.reason);
      if (reason) verdict.permissionDecisionReason = reason;
      if (decision === 'deny') {
        verdict.status = 'blocked';
        verdict.reason = reason ?? 'a PreToolUse hook denied this tool call';
      }
    }
    if (isObject(specific.updatedInput)) verdict.updatedInput = specific.updatedInput;
    return verdict;
  }
  if (json.decision === 'block' && canBlock(event)) {
    verdict.status = 'blocked';
    verdict.reason = text(json.reason) ?? `a ${event} hook blocked this`;
  }
  return verdict;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
