// /config: the effective settings and where each value came from; /mcp: the MCP servers, their
// state and tools. Each opens a view with a page the controller computes from the session.
import type { SlashCommand } from './types.js';

export const SETTINGS_COMMANDS: SlashCommand[] = [
  {
    name: 'config',
    args: '[KEY]',
    description: 'the effective settings and where each came from (KEY narrows: /config hooks)',
    run(context, args) {
      const error = context.controller.showConfig(args.trim() || undefined);
      return error ? { kind: 'error', message: error } : { kind: 'view', view: 'config' };
    },
  },
  {
    name: 'mcp',
    description: 'MCP servers: status and tools',
    run(context) {
      context.controller.showMcp();
      return { kind: 'view', view: 'mcp' };
    },
  },
];
