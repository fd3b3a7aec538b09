// A tool context over a real directory, for tests that run tools through a ToolRegistry.
import { agentEmitter, EventHub } from '../../src/runtime/events/events.js';
import type { ToolContext } from '../../src/runtime/tools/types.js';
import { Workspace } from '../../src/runtime/workspace/workspace.js';

export function makeToolContext(root: string, options: { signal?: AbortSignal; agent?: string } = {}): ToolContext {
  const agent = options.agent ?? 'tester';
  return {
    workspace: new Workspace(root),
    agent,
    signal: options.signal ?? new AbortController().signal,
    events: agentEmitter(new EventHub(), agent),
  };
}
