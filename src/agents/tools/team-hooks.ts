// The team's hooks (docs/contract.md#hooks): one HookRunner per session, run on an agent's behalf in its
// workspace. Every run is a `hook` event in that agent's log; a hook's own failure is a warning,
// never fatal. Where each event fires: PreToolUse/PostToolUse around every tool call (tool-pipeline.ts),
// UserPromptSubmit and Stop in the lead, TeammateIdle in a teammate, TaskCompleted in the
// completion gate (completion-gate.ts), PreCompact in the compactor, SessionStart/SessionEnd and
// Notification in the session core.
import type { AgentEmitter } from '../../runtime/events/events.js';
import { BLOCKING_EFFECT, type HookEventInput } from '../../runtime/hooks/hook-events.js';
import { hookEventFields, type HookOutcome, type HookRunContext, type HookRunner } from '../../runtime/hooks/hook-runner.js';
import type { HookEventName } from '../../runtime/settings/schema.js';

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
  async run(
    events: AgentEmitter,
    input: HookEventInput,
    context: Omit<HookRunContext, 'agent'>,
    detail: { tool?: string; task_id?: number } = {},
  ): Promise<HookOutcome> {
    const mode = this.#permissionMode(events.agent);
    const outcome = await this.#runner.run(input, { agent: events.agent, ...(mode ? { permissionMode: mode } : {}), ...context });
    if (!outcome.ran) return outcome;
    const effect = outcome.blocked ? BLOCKING_EFFECT[outcome.event] : undefined;
    events.emit('hook', { ...hookEventFields(outcome), ...(effect ? { effect } : {}), ...detail });
    for (const message of outcome.messages) events.emit('warning', { message, hook: outcome.event });
    return outcome;
  }
}
