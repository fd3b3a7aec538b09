// One tool call, from its checked input to its result: the steps every call of an agent's tool
// passes, in order (docs/architecture.md#a-bash-tool-call-from-tool_use-to-its-result). Before it:
// `ToolRegistry.run` (runtime/tools/registry.ts) checks the input against the tool's schema; after
// it, the same `run` scrubs every credential from the result and turns a throw into an error result.
//
// The steps go by what a tool declares it does (its `effects`, runtime/tools/types.ts), never by its
// name; the one exception is the completion gate, whose two tools (task_update, review_approve) finish
// a task. The pipeline lives in agents/ because hooks and the completion gate are the team's.
import { checkpointBefore, repairAfter } from './checkpointed-tools.js';
import { completionVerdict, type CompletionGateOptions } from './completion-gate.js';
import type { TeamHooks } from './team-hooks.js';
import type { HookRunContext } from '../../runtime/hooks/hook-runner.js';
import type { PermissionGate } from '../../runtime/permissions/permission-gate.js';
import type { SandboxStatus } from '../../runtime/sandbox/status.js';
import { oneLine } from '../../runtime/tools/registry.js';
import { canWriteWorkspace, effectsOf, ToolError, type Tool, type ToolContext, type ToolResult } from '../../runtime/tools/types.js';

/** What the steps need from the team; a step whose part is absent is skipped. */
export interface PipelineDeps {
  /** The team's own checkout: the one checkpoints are taken of (a teammate's worktree is its own branch). */
  teamRoot: string;
  /** Whether commands run sandboxed: read once when the session opened. Absent: the tools run no commands. */
  sandbox?: SandboxStatus | undefined;
  /** Absent for an external agent's team tools: its own CLI asks about its own tools. */
  permissions?: PermissionGate | undefined;
  hooks?: TeamHooks | undefined;
  completion?: CompletionGateOptions | undefined;
}

/** One call on its way: steps may replace its input and context, and leave notes for the steps after the run. */
export interface Call {
  readonly tool: Tool;
  input: unknown;
  context: ToolContext;
  /** What the completion gate says with the result (the verify command's summary). */
  completionNote?: string | undefined;
}

/** A step before the run: undefined to go on, or the result that ends the call there. */
export type BeforeStep = (call: Call, deps: PipelineDeps) => Promise<ToolResult | undefined>;
/** A step after the run: the result, with what the step adds. */
export type AfterStep = (call: Call, result: ToolResult, deps: PipelineDeps) => Promise<ToolResult>;

/** Runs `tool` through every step. Throws what the tool throws (the registry makes it an error result). */
export async function runCall(tool: Tool, input: unknown, context: ToolContext, deps: PipelineDeps): Promise<ToolResult> {
  const call: Call = { tool, input, context };
  for (const step of BEFORE_RUN) {
    const ended = await step(call, deps);
    if (ended) return ended;
  }
  let result = asResult(await tool.run(call.input, call.context));
  for (const step of AFTER_RUN) result = await step(call, result, deps);
  return result;
}

/** The tools, each of whose calls runs through the pipeline. */
export function throughPipeline(tools: readonly Tool[], deps: PipelineDeps): Tool[] {
  return tools.map((tool) => {
    const { prepare } = tool;
    return {
      ...tool,
      run: (input, context) => runCall(tool, input, context, deps),
      // A head start sees the sandbox and the mode the run will (steps 1 and 5): a plan-mode call starts nothing.
      ...(prepare ? { prepare: (input: unknown, context: ToolContext) => prepare.call(tool, input, preparedContext(context, deps)) } : {}),
    };
  });
}

function preparedContext(context: ToolContext, deps: PipelineDeps): ToolContext {
  const mode = deps.permissions?.modeOf(context.agent);
  return { ...context, ...(deps.sandbox ? { sandbox: deps.sandbox } : {}), ...(mode ? { permissionMode: mode } : {}) };
}

// ── 1. the session's sandbox status goes into the context: the permission gate and bash read it
//       from there, not each from a global of its own.
export const sessionSandbox: BeforeStep = async (call, deps) => {
  if (deps.sandbox) call.context = { ...call.context, sandbox: deps.sandbox };
  return undefined;
};

// ── 2. PreToolUse hooks see the call before huddle's own checks do (as in Claude Code): a block ends
//       it with the hook's reason, `updatedInput` replaces the input, an `ask` puts it to the person.
export const preToolUseHooks: BeforeStep = async (call, deps) => {
  const { tool, context } = call;
  if (!deps.hooks?.has('PreToolUse')) return undefined;
  const outcome = await deps.hooks.run(
    context.events,
    { hook_event_name: 'PreToolUse', tool_name: tool.name, tool_input: call.input, ...(context.toolUseId ? { tool_use_id: context.toolUseId } : {}) },
    where(context),
    { tool: tool.name },
  );
  if (outcome.blocked || outcome.stop) return refused(`${tool.name} was not run: a PreToolUse hook blocked it: ${outcome.reason ?? outcome.stop}`);
  if (outcome.updatedInput) {
    const parsed = tool.input.safeParse(outcome.updatedInput);
    if (!parsed.success)
      return refused(
        `${tool.name} was not run: a PreToolUse hook changed its input into one that is not valid (${parsed.error.issues[0]?.message ?? 'invalid'})`,
      );
    call.input = parsed.data;
  }
  if (outcome.permissionDecision !== 'ask') return undefined;
  const headless = `${tool.name} was not run: a PreToolUse hook asks the person to confirm it, and nobody can answer in a headless run`;
  if (!deps.permissions) return refused(headless);
  const reason = `a PreToolUse hook asks you to confirm this${outcome.permissionDecisionReason ? `: ${outcome.permissionDecisionReason}` : ''}`;
  try {
    await deps.permissions.askPerson(context, { tool: tool.name, summary: oneLine(JSON.stringify(call.input), 200), reason, prefixes: [], headless });
  } catch (error) {
    return refused((error as Error).message);
  }
  return undefined;
};

// ── 2b. the permission rules' deny and ask lists (Claude Code's syntax), for every tool in every mode:
//        after the hooks, as in Claude Code, so a hook's "allow" cannot carve around a deny.
export const permissionRules: BeforeStep = async (call, deps) => {
  if (!deps.permissions) return undefined;
  try {
    await deps.permissions.checkRules(call.tool.name, call.input, call.context);
  } catch (error) {
    if (error instanceof ToolError) return refused(error.message);
    throw error;
  }
  return undefined;
};

// ── 3. the completion gate: a task is completed (or sent to review) only when its verify command
//       passes and no TaskCompleted hook keeps it open.
export const completionGate: BeforeStep = async (call, deps) => {
  if (!deps.completion) return undefined;
  const verdict = await completionVerdict(call.tool.name, call.input, call.context, deps.completion);
  if ('refuse' in verdict) return refused(verdict.refuse);
  call.completionNote = verdict.note;
  return undefined;
};

// ── 4. the permission gate, by what the tool declares: the command policy for `shell`, protected and
//       configuration paths for `write`, the person for an `external` (MCP) tool in ask mode. Then the
//       agent's mode rides in the context: plan mode's commands run in a read-only sandbox.
export const permissionGate: BeforeStep = async (call, deps) => {
  const gate = deps.permissions;
  if (!gate) return undefined;
  try {
    await gate.check(call.tool.name, effectsOf(call.tool), call.input as Record<string, unknown>, call.context);
  } catch (error) {
    // A refusal is the whole result (not "bash failed: …"): it says why and what to do.
    if (error instanceof ToolError) return refused(error.message);
    throw error;
  }
  call.context = { ...call.context, permissionMode: gate.modeOf(call.context.agent) };
  return undefined;
};

// ── 5. a checkpoint of the team's checkout before a call that can write it (`huddle rewind` undoes
//       the call). After the permission gate: a refused call takes none.
export const checkpoint: BeforeStep = async (call, deps) => {
  if (checkpointed(call, deps)) await checkpointBefore(deps.teamRoot, call.tool, call.input, call.context);
  return undefined;
};

// ── 6. the tool runs (runCall above).

// ── 7. the repository looked at after a call that could write it: a destroyed `.git` is rebuilt at
//       once, the person warned and the model told.
export const repairGit: AfterStep = async (call, result, deps) => {
  if (!checkpointed(call, deps)) return result;
  const line = await repairAfter(deps.teamRoot, call.context);
  return line ? withNote(result, `\n\n[huddle] this call broke the repository: ${line}. Do not delete .git or its contents.`) : result;
};

// ── 8. the verify command's summary goes with a completion the gate let through.
export const completionNote: AfterStep = async (call, result) =>
  call.completionNote ? { ...result, content: `${result.content} (${call.completionNote})` } : result;

// ── 9. PostToolUse hooks see the result: their block reason or added context goes to the model with it.
export const postToolUseHooks: AfterStep = async (call, result, deps) => {
  const { tool, context } = call;
  if (!deps.hooks?.has('PostToolUse')) return result;
  const outcome = await deps.hooks.run(
    context.events,
    {
      hook_event_name: 'PostToolUse',
      tool_name: tool.name,
      tool_input: call.input,
      tool_response: { content: result.content, is_error: result.isError === true },
      ...(context.toolUseId ? { tool_use_id: context.toolUseId } : {}),
    },
    where(context),
    { tool: tool.name },
  );
  const notes = [
    outcome.blocked ? `[PostToolUse hook] ${outcome.reason}` : undefined,
    outcome.additionalContext && `[PostToolUse hook context] ${outcome.additionalContext}`,
  ].filter(Boolean);
  return notes.length ? withNote(result, `\n\n${notes.join('\n')}`) : result;
};

// ── 10. ToolRegistry.run scrubs every credential from the result (runtime/secrets.ts).

export const BEFORE_RUN: readonly BeforeStep[] = [sessionSandbox, preToolUseHooks, permissionRules, completionGate, permissionGate, checkpoint];
export const AFTER_RUN: readonly AfterStep[] = [repairGit, completionNote, postToolUseHooks];

/** Checkpoints and the look at `.git` are for calls that can write the team's own checkout, outside plan mode. */
function checkpointed(call: Call, deps: PipelineDeps): boolean {
  return canWriteWorkspace(call.tool) && call.context.workspace.root === deps.teamRoot && call.context.permissionMode !== 'plan';
}

function refused(content: string): ToolResult {
  return { content, isError: true };
}

function asResult(output: string | ToolResult): ToolResult {
  return typeof output === 'string' ? { content: output } : output;
}

/** `note` added to the result's text, and as a last text block when the model gets blocks. */
function withNote(result: ToolResult, note: string): ToolResult {
  return { ...result, content: `${result.content}${note}`, ...(result.blocks ? { blocks: [...result.blocks, { type: 'text', text: note.trim() }] } : {}) };
}

function where(context: ToolContext): Omit<HookRunContext, 'agent'> {
  return { cwd: context.workspace.root, signal: context.signal };
}
