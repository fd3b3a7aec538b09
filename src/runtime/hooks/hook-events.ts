// The hook events (docs/contract.md#hooks, Claude Code's names and fields): what each one carries on stdin,
// what its matcher is matched against, and whether a hook can block it.
import type { HookEventName } from '../settings/schema.js';

export { HOOK_EVENTS, type HookEventName } from '../settings/schema.js';

/** Fields every event carries; huddle adds `agent` (who the hook runs for). */
export interface HookCommonInput {
  hook_event_name: HookEventName;
  session_id: string;
  cwd: string;
  agent: string;
  permission_mode?: string;
}

export interface TaskSnapshot {
  id: number;
  subject: string;
  description?: string;
  status?: string;
  owner?: string | null;
  [field: string]: unknown;
}

/** The event-specific part of a hook's input, by event. */
export type HookEventInput =
  | { hook_event_name: 'PreToolUse'; tool_name: string; tool_input: unknown; tool_use_id?: string }
  | { hook_event_name: 'PostToolUse'; tool_name: string; tool_input: unknown; tool_response: unknown; tool_use_id?: string }
  | { hook_event_name: 'UserPromptSubmit'; prompt: string }
  | { hook_event_name: 'Stop'; stop_hook_active: boolean; last_assistant_message?: string }
  | { hook_event_name: 'SessionStart'; source: 'startup' | 'resume' | 'clear' | 'compact'; model?: string }
  | { hook_event_name: 'SessionEnd'; reason: string }
  | { hook_event_name: 'PreCompact'; trigger: 'manual' | 'auto'; custom_instructions?: string }
  | { hook_event_name: 'Notification'; message: string; title?: string; notification_type?: string }
  | { hook_event_name: 'TeammateIdle'; teammate_name: string; team_name: string }
  | {
      hook_event_name: 'TaskCompleted';
      task_id: number;
      task_subject: string;
      task_description?: string;
      teammate_name: string;
      team_name: string;
      task: TaskSnapshot;
    };

export type HookInput = HookCommonInput & HookEventInput;

/**
 * What exit code 2 (or `"decision": "block"`) does per event. Events not listed cannot be blocked:
 * their hook's stderr only reaches the person.
 */
export const BLOCKING_EFFECT: Partial<Record<HookEventName, string>> = {
  PreToolUse: 'the tool call is not run; the reason goes to the model as the tool error',
  PostToolUse: 'the reason goes to the model with the tool result (the tool already ran)',
  UserPromptSubmit: 'the prompt is dropped; the reason goes to the person',
  Stop: 'the agent keeps working, with the reason as its next turn',
  TeammateIdle: 'the teammate keeps working, with the reason as its next turn',
  TaskCompleted: 'the task stays open; the reason goes to the model as the tool error',
};

export function canBlock(event: HookEventName): boolean {
  return BLOCKING_EFFECT[event] !== undefined;
}

/** The value an event's matcher is tested against; undefined: matchers do not apply, every hook runs. */
export function matchTarget(input: HookEventInput): string | undefined {
  switch (input.hook_event_name) {
    case 'PreToolUse':
    case 'PostToolUse':
      return input.tool_name;
    case 'SessionStart':
      return input.source;
    case 'PreCompact':
      return input.trigger;
    case 'Notification':
      return input.notification_type;
    case 'SessionEnd':
      return input.reason;
    default:
      return undefined;
  }
}
