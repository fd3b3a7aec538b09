// The set of tools one agent may call: their API definitions, input validation and execution.
import * as z from 'zod';
import { scrub } from '../secrets.js';
import type { JsonObjectSchema, Tool, ToolContext, ToolResult } from './types.js';

/** huddle's own tools' input schemas as JSON text, written in by the build (agents/tools/built-input-schemas.ts); none when run from source. */
declare const __HUDDLE_TOOL_INPUT_SCHEMAS__: string | undefined;
let builtSchemas: Record<string, JsonObjectSchema[]> | undefined;

/** Read at the first definition: text inlined where it is used (an object would be a module of its own, loaded by every face). */
function builtInputSchemas(): Record<string, JsonObjectSchema[]> {
  builtSchemas ??= typeof __HUDDLE_TOOL_INPUT_SCHEMAS__ === 'string' ? (JSON.parse(__HUDDLE_TOOL_INPUT_SCHEMAS__) as Record<string, JsonObjectSchema[]>) : {};
  return builtSchemas;
}

export interface ToolDefinitionParam {
  name: string;
  description: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}

export class ToolRegistry {
  #tools = new Map<string, Tool>();
  readonly #shared: ReadonlySet<string>;

  /** `shared`: the names of the tools every agent of the team has alike, which come first (sharedPrefixLength). */
  constructor(tools: Iterable<Tool> = [], shared: ReadonlySet<string> = new Set()) {
    this.#shared = shared;
    for (const tool of tools) this.add(tool);
  }

  /** How many of the leading tools are ones every agent of the team has: the prompt cache keeps them once for all. */
  sharedPrefixLength(): number {
    let count = 0;
    for (const name of this.#tools.keys()) {
      if (!this.#shared.has(name)) break;
      count++;
    }
    return count;
  }

  add(tool: Tool): this {
    this.#tools.set(tool.name, tool);
    return this;
  }

  remove(name: string): this {
    this.#tools.delete(name);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }

  /** The `tools` parameter of a Messages API request. */
  definitions(): ToolDefinitionParam[] {
    return [...this.#tools.values()].map(definitionOf);
  }

  summarize(name: string, input: unknown): string {
    const tool = this.#tools.get(name);
    if (tool?.summarize) {
      const parsed = tool.input.safeParse(input);
      if (parsed.success) return tool.summarize(parsed.data);
    }
    return defaultSummary(input);
  }

  /** Lets a call's tool start what its run will wait for (Tool.prepare); nothing for input the run would refuse. Never throws. */
  prepare(name: string, input: unknown, context: ToolContext): void {
    const tool = this.#tools.get(name);
    if (!tool?.prepare) return;
    const parsed = tool.input.safeParse(input ?? {});
    if (!parsed.success) return;
    try {
      tool.prepare(parsed.data, context);
    } catch {
      // a head start only: the run does the work and reports what fails
    }
  }

  /**
   * Runs one tool call. Never throws: every failure becomes an error result for the model. What
   * goes back to the model never holds huddle's credentials, in any spelling (secrets.ts).
   */
  async run(name: string, input: unknown, context: ToolContext): Promise<ToolResult> {
    const result = await this.#run(name, input, context);
    const content = scrub(result.content);
    // An MCP server's text blocks go to the model as they are: scrubbed the same.
    const blocks = result.blocks?.map((block) => (block.type === 'text' ? { ...block, text: scrub(block.text) } : block));
    if (content === result.content && !blocks) return result;
    return { ...result, content, ...(blocks ? { blocks } : {}) };
  }

  async #run(name: string, input: unknown, context: ToolContext): Promise<ToolResult> {
    const tool = this.#tools.get(name);
    if (!tool) {
      return { content: `unknown tool '${name}'; the tools you have are: ${this.names.join(', ')}`, isError: true };
    }
    const parsed = tool.input.safeParse(input ?? {});
    if (!parsed.success) {
      return { content: `invalid input for ${name}: ${formatZodError(parsed.error)}`, isError: true };
    }
    try {
      const output = await tool.run(parsed.data, context);
      return typeof output === 'string' ? { content: output } : output;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { content: `${name} failed: ${message}`, isError: true };
    }
  }
}

// Converting a zod schema to JSON Schema takes milliseconds, and every model call sends every tool:
// each tool's definition is made once (tools are shared between agents' registries), and huddle's own
// tools' schemas were converted when huddle was built.
const DEFINITIONS = new WeakMap<Tool, ToolDefinitionParam>();

function definitionOf(tool: Tool): ToolDefinitionParam {
  let definition = DEFINITIONS.get(tool);
  if (definition) return definition;
  const input_schema = tool.inputJsonSchema ?? builtInputSchema(tool) ?? inputJsonSchemaOf(tool);
  definition = { name: tool.name, description: tool.description, input_schema };
  DEFINITIONS.set(tool, definition);
  return definition;
}

/** The JSON Schema of `tool`'s zod input, as the model is offered it. */
export function inputJsonSchemaOf(tool: Tool): JsonObjectSchema {
  const { $schema: _drop, ...schema } = withoutBoundsThatSayNothing(z.toJSONSchema(tool.input, { io: 'input' })) as Record<string, unknown>;
  return { ...schema, type: 'object' };
}

/**
 * The build's schema for a tool of this name that asks for the same fields in the same order (a
 * tool of another origin with a name of huddle's gets its own).
 */
export function builtInputSchema(tool: Tool, schemas: Record<string, JsonObjectSchema[]> = builtInputSchemas()): JsonObjectSchema | undefined {
  const candidates = Object.hasOwn(schemas, tool.name) ? schemas[tool.name] : undefined;
  if (!candidates || !(tool.input instanceof z.ZodObject)) return undefined;
  const fields = Object.keys(tool.input.shape).join('\0');
  return candidates.find((schema) => fieldsOf(schema).join('\0') === fields);
}

/** The top-level fields a JSON Schema of an object names, in order. */
export function fieldsOf(schema: JsonObjectSchema): string[] {
  return Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
}

/**
 * The schema without bounds that tell the model nothing: those zod gives every integer (±2^53−1), a
 * required string's `minLength: 1` and an id's `exclusiveMinimum: 0` (the input is still checked
 * against them, with a clear error). Every request carries every tool, so each costs tokens on every call.
 */
function withoutBoundsThatSayNothing(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutBoundsThatSayNothing);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue;
    if ((key === 'minLength' && value === 1) || (key === 'exclusiveMinimum' && value === 0)) continue;
    out[key] = withoutBoundsThatSayNothing(value);
  }
  return out;
}

function formatZodError(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : 'input'}: ${issue.message}`).join('; ');
}

function defaultSummary(input: unknown): string {
  if (input && typeof input === 'object') {
    for (const value of Object.values(input)) {
      if (typeof value === 'string') return oneLine(value);
      if (typeof value === 'number') return String(value);
    }
  }
  return '';
}

export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
