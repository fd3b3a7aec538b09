// The team's hooks (docs/contract.md#hooks): one HookRunner per session, run on an agent's behalf in its
// workspace. Every run is a `hook` event in that agent's log; a hook's own failure is a warning,
// never fatal. Where each event fires: PreToolUse/PostToolUse around every tool (hookedTools below),
// UserPromptSubmit and Stop in the lead, TeammateIdle in a teammate, TaskCompleted in the
// completion gate (completion-gate.ts), PreCompact in the compactor, SessionStart/SessionEnd and
// Notification in the session core.
import type { AgentEmitter } from '../runtime/events/events.js';
import { BLOCKING_EFFECT, type HookEventInput } from '../runtime/hooks/hook-events.js';
import { hookEventFields, type HookOutcome, type HookRunContext, type HookRunner } from '../runtime/hooks/hook-runner.js';
import type { HookEventName } from '../runtime/settings/schema.js';
import type { PermissionGate } from '../runtime/permissions/guarded-tools.js';
import { oneLine } from '../runtime/tools/registry.js';
import type { Tool, ToolContext, ToolResult } from '../runtime/tools/types.js';

/** A Stop or TeammateIdle hook may keep an agent working this many times in a row, then it is let go. */
export const MAX_HOOK_CONTINUATIONS = 8;

export class TeamHooks {
  readonly #runner: HookRunner;
  readonly #permissionMode: (agent: string) => string | undefined;

  constructor(runner: HookRunner, permissionMode: (agent: string) => string | undefined = () => undefined) {
    this.#runner = runner;
    this.#permissionMode = permissionMode;
  }

  has(event: HookEventName): boolean {
    return this.#runner.has(event);
  }

  /**
   * Runs the event's hooks for `events.agent` in `cwd` and logs the run (a `hook` event, and a
   * warning per failed hook). Resolves with the outcome; never throws for a hook's failure.
   */
  async run(events: AgentEmitter, input: HookEventInput, context: Omit<HookRunContext, 'agent'>, detail: { tool?: string; task_id?: number } = {}): Promise<HookOutcome> {
    const mode = this.#permissionMode(events.agent);
    const outcome = await this.#runner.run(input, { agent: events.agent, ...(mode ? { permissionMode: mode } : {}), ...context });
    if (!outcome.ran) return outcome;
    const effect = outcome.blocked ? BLOCKING_EFFECT[outcome.event] : undefined;
    events.emit('hook', { ...hookEventFields(outcome), ...(effect ? { effect } : {}), ...detail });
    for (const message of outcome.messages) events.emit('warning', { message, hook: outcome.event });
    return outcome;
  }
}

/**
 * Every tool with PreToolUse and PostToolUse hooks around it, in the style of guardTools: a blocking
 * PreToolUse hook (exit 2, or a deny decision) keeps the call from running and its reason goes to
 * the model as the tool error; `updatedInput` replaces the input; an `ask` decision puts the call to
 * the person first. A PostToolUse hook's block reason or context goes to the model with the result.
 * Wrap outside the permission guard: hooks see a call before huddle's own checks do (as in Claude Code).
 */
export function hookedTools(tools: Tool[], hooks: TeamHooks | undefined, gate: PermissionGate): Tool[] {
  if (!hooks || (!hooks.has('PreToolUse') && !hooks.has('PostToolUse'))) return tools;
  return tools.map((tool) => hookedTool(tool, hooks, gate));
}

function hookedTool(tool: Tool, hooks: TeamHooks, gate: PermissionGate): Tool {
  return {
    ...tool,
    run: async (input, context): Promise<string | ToolResult> => {
      let actual: unknown = input;
      if (hooks.has('PreToolUse')) {
        const outcome = await hooks.run(context.events, { hook_event_name: 'PreToolUse', tool_name: tool.name, tool_input: input }, where(context), { tool: tool.name });
        if (outcome.blocked || outcome.stop) {
          return { content: `${tool.name} was not run: a PreToolUse hook blocked it: ${outcome.reason ?? outcome.stop}`, isError: true };
        }
        if (outcome.updatedInput) {
          const parsed = tool.input.safeParse(outcome.updatedInput);
          if (!parsed.success) return { content: `${tool.name} was not run: a PreToolUse hook changed its input into one that is not valid (${parsed.error.issues[0]?.message ?? 'invalid'})`, isError: true };
          actual = parsed.data;
        }
        if (outcome.permissionDecision === 'ask') {
          const summary = oneLine(JSON.stringify(actual), 200);
          const reason = `a PreToolUse hook asks you to confirm this${outcome.permissionDecisionReason ? `: ${outcome.permissionDecisionReason}` : ''}`;
          try {
            await gate.askPerson(context, { tool: tool.name, summary, reason, prefixes: [], headless: `${tool.name} was not run: a PreToolUse hook asks the person to confirm it, and nobody can answer in a headless run` });
          } catch (error) {
            return { content: (error as Error).message, isError: true };
          }
        }
      }
      const output = await tool.run(actual, context);
      const result: ToolResult = typeof output === 'string' ? { content: output } : output;
      if (!hooks.has('PostToolUse')) return result;
      const outcome = await hooks.run(
        context.events,
        { hook_event_name: 'PostToolUse', tool_name: tool.name, tool_input: actual, tool_response: { content: result.content, is_error: result.isError === true } },
        where(context),
        { tool: tool.name },
      );
      const notes = [outcome.blocked ? `[PostToolUse hook] ${outcome.reason}` : undefined, outcome.additionalContext && `[PostToolUse hook context] ${outcome.additionalContext}`].filter(Boolean);
      if (!notes.length) return result;
      const note = `\n\n${notes.join('\n')}`;
      return { ...result, content: `${result.content}${note}`, ...(result.blocks ? { blocks: [...result.blocks, { type: 'text', text: note.trim() }] } : {}) };
    },
  };
}

function where(context: ToolContext): Omit<HookRunContext, 'agent'> {
  return { cwd: context.workspace.root, signal: context.signal };
}
