// The shape every tool shares. A tool validates its input with zod, runs, and returns text
// for the model. Throwing a ToolError (or any error) becomes a tool_result with is_error: true.
import type * as z from 'zod';
import type { AgentEmitter } from '../events/events.js';
import type { UsageCounts } from '../events/event-types.js';
import type { SandboxStatus } from '../sandbox/status.js';
import type { PermissionMode } from '../vocabulary.js';
import type { Workspace } from '../workspace/workspace.js';

export interface ToolContext {
  /** The directory the agent's file tools and shell are confined to. */
  workspace: Workspace;
  /** The agent calling the tool. */
  agent: string;
  /** The model's id of this call (`tool_use_id` for hooks; a subagent's events name it as their parent); absent for a call not made by a model. */
  toolUseId?: string;
  /** Aborted when the agent is interrupted or shut down; long tools must honour it. */
  signal: AbortSignal;
  events: AgentEmitter;
  /** Set by the permission step: in plan mode commands run in a read-only sandbox. Undefined: as auto. */
  permissionMode?: PermissionMode;
  /**
   * Whether commands run sandboxed, read once when the session opened and handed to every call
   * (agents/tools/tool-pipeline.ts). Absent (a context made outside a team): the process's status.
   */
  sandbox?: SandboxStatus;
  /** Counts a model call a tool made for the agent (a subagent's) in the agent's totals, as its `usage` event. */
  chargeUsage?(
    usage: UsageCounts,
    costUsd: number,
    fields: { subagent: string; parent_tool_use_id?: string; message_id?: string; stop_reason?: string | null },
  ): void;
}

/**
 * What a call of a tool can do, declared with the tool: the pipeline's steps (agents/tools/tool-pipeline.ts)
 * read this, never the tool's name.
 */
export const TOOL_EFFECTS = [
  /** Reads the workspace, the board, the roster or the inbox; changes nothing. Plan mode keeps it. */
  'read',
  /** Writes the workspace file `input.path`: the permission gate's write check, a checkpoint first. */
  'write',
  /** Runs `input.command` in the sandbox: the permission gate's command policy, a checkpoint first. */
  'shell',
  /** Changes the task board (tasks, claims, reviews). */
  'board',
  /** Sends a message to other members. Plan mode keeps it: a planner reports. */
  'message',
  /** Changes the team itself: spawns, shutdowns, plan decisions, going idle. */
  'team',
  /** Does what an MCP server says, and the server does not mark it read-only: plan mode refuses it, ask mode asks. */
  'external',
] as const;
export type ToolEffect = (typeof TOOL_EFFECTS)[number];

/** A tool that declares no effects (a hand-made one) is treated as the least known: `external`. */
export function effectsOf(tool: Pick<Tool, 'effects'>): readonly ToolEffect[] {
  return tool.effects ?? ['external'];
}

/** Only reads and reports: what a plan-mode agent keeps before its plan is approved. */
export function isReadOnly(tool: Pick<Tool, 'effects'>): boolean {
  return effectsOf(tool).every((effect) => effect === 'read' || effect === 'message');
}

/** Can change the workspace: the calls a checkpoint is taken before and the repository looked at after. */
export function canWriteWorkspace(tool: Pick<Tool, 'effects'>): boolean {
  return effectsOf(tool).some((effect) => effect === 'write' || effect === 'shell');
}

export interface ToolResult {
  /** The result as text: what logs, events and screens show (and the model gets, without `blocks`). */
  content: string;
  isError?: boolean;
  /** Richer content for the model (an MCP tool's images), sent instead of `content` when present. */
  blocks?: ToolResultBlock[];
}

/** The parts of a tool result the Messages API accepts. */
export type ToolResultBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'; data: string } };

/** A JSON Schema for a tool's input, passed to the API as is. */
export interface JsonObjectSchema {
  type: 'object';
  [key: string]: unknown;
}

export interface Tool<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: Schema;
  /**
   * The input schema to offer the model, untouched, instead of one derived from `input` (an MCP
   * server's own schema). `input` then only needs to accept an object: the server validates.
   */
  inputJsonSchema?: JsonObjectSchema;
  /** What a call can do (TOOL_EFFECTS); defineTool requires it. */
  effects?: readonly ToolEffect[];
  run(input: z.infer<Schema>, context: ToolContext): Promise<string | ToolResult>;
  /**
   * Called for every call of a model response before the first of them runs, with the context the
   * call will run in: starts what a run would wait for (a sandbox) so that it overlaps the calls
   * before this one. It decides nothing and changes nothing the agent can see; the run checks all
   * again. Never awaited; must not throw.
   */
  prepare?(input: z.infer<Schema>, context: ToolContext): void;
  /** A short summary of the input for one-line displays (defaults to the first string field). */
  summarize?(input: z.infer<Schema>): string;
}

/** An error whose message is meant for the model as-is: say what was wrong and how to fix it. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

/** A tool, with its effects declared. */
export function defineTool<Schema extends z.ZodType>(tool: Tool<Schema> & { effects: readonly ToolEffect[] }): Tool<Schema> {
  return tool;
}
