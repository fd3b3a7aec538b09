// The shape every tool shares. A tool validates its input with zod, runs, and returns text
// for the model. Throwing a ToolError (or any error) becomes a tool_result with is_error: true.
import type { z } from 'zod';
import type { AgentEmitter } from '../events/events.js';
import type { PermissionMode } from '../permissions/permission-mode.js';
import type { Workspace } from '../workspace/workspace.js';

export interface ToolContext {
  /** The directory the agent's file tools and shell are confined to. */
  workspace: Workspace;
  /** The agent calling the tool. */
  agent: string;
  /** Aborted when the agent is interrupted or shut down; long tools must honour it. */
  signal: AbortSignal;
  events: AgentEmitter;
  /** Set by the permission gate: in plan mode commands run in a read-only sandbox. Undefined: as auto. */
  permissionMode?: PermissionMode;
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
  run(input: z.infer<Schema>, context: ToolContext): Promise<string | ToolResult>;
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

export function defineTool<Schema extends z.ZodType>(tool: Tool<Schema>): Tool<Schema> {
  return tool;
}
