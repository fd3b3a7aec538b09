// The JSON Schemas of huddle's own tools' inputs, computed when huddle is built (scripts/bundle-options.mjs
// runs this once and puts the result into the bundle), so that no start converts them with zod again
// (docs/architecture.md#srcruntime). A tool's input schema depends on nothing its factory is given, so each
// tool set is made here with stand-ins that are never called. Two tools may share a name (plan_approval:
// the lead's decision, a teammate's plan): their fields tell them apart.
import { fieldsOf, inputJsonSchemaOf } from '../../runtime/tools/registry.js';
import { coreTools } from '../../runtime/tools/core-tools.js';
import { messageTools } from '../../runtime/tools/message-tools.js';
import { taskTools } from '../../runtime/tools/task-tools.js';
import type { JsonObjectSchema, Tool } from '../../runtime/tools/types.js';
import { reviewTools } from './review-tools.js';
import { shipTools } from './ship-tools.js';
import { subagentTool } from './subagent-tool.js';
import { leadTools, planSubmissionTool, readOnlyBashTool, teammateTools } from './team-tools.js';
import { verdictTools } from './verdict-tool.js';

/** Every tool huddle defines, as the factories make them (MCP servers' tools bring their own schemas). */
export function huddleTools(): Tool[] {
  const unused = new Proxy({}, { get: () => unused }) as never;
  const accepting = { accepts: () => true, record: () => undefined } as never;
  const messages = messageTools(unused);
  return [
    ...coreTools(),
    ...taskTools(unused),
    messages.sendMessage,
    messages.readInbox,
    messages.broadcast,
    ...reviewTools(unused),
    subagentTool({ readTools: [] } as never),
    ...leadTools(unused),
    ...teammateTools(unused),
    planSubmissionTool(unused),
    readOnlyBashTool(),
    ...shipTools(unused),
    ...verdictTools(accepting, 'judge'),
  ];
}

/**
 * Tool name → the input schemas the model is offered, one per list of fields (the registry picks the
 * one whose fields a tool's input asks for). Two tools of one name and the same fields but different
 * schemas would be told apart by nothing: that name is left out.
 */
export function builtInputSchemas(): Record<string, JsonObjectSchema[]> {
  const byName = new Map<string, Map<string, JsonObjectSchema>>();
  const ambiguous = new Set<string>();
  for (const tool of huddleTools()) {
    const schema = inputJsonSchemaOf(tool);
    const fields = fieldsOf(schema).join('\0');
    const same = byName.get(tool.name) ?? new Map<string, JsonObjectSchema>();
    const earlier = same.get(fields);
    if (earlier && JSON.stringify(earlier) !== JSON.stringify(schema)) ambiguous.add(tool.name);
    byName.set(tool.name, same.set(fields, schema));
  }
  for (const name of ambiguous) byName.delete(name);
  return Object.fromEntries([...byName].map(([name, schemas]) => [name, [...schemas.values()]]));
}
