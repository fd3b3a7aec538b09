// Slash commands for supervising agents: /restart (a fresh loop that keeps workspace, tasks and
// a summary of the transcript; src/agents/lifecycle/restart.ts).
import type { SlashCommand } from './types.js';
import { agentNames, attempt, oneName, usage } from './helpers.js';

export const SUPERVISION_COMMANDS: SlashCommand[] = [
  {
    name: 'restart',
    args: 'NAME',
    description: 'start a fresh loop for an agent, keeping its workspace, tasks and a summary',
    complete: agentNames,
    run(context, args) {
      const name = oneName(args) ?? (args.trim() === '' ? context.focus : undefined);
      if (!name) return usage(this);
      if (!context.state.agents[name]) return { kind: 'error', message: `no agent named '${name}'; agents: ${context.state.order.join(', ')}` };
      return attempt(() => context.controller.restart(name));
    },
  },
];
