// Every slash command; docs/console.md#commands is generated from these (npm run docs).
import type { SlashCommand } from './types.js';
import { agentNames, attempt, firstWord, teammateNames, usage } from './helpers.js';
import { WORKTREE_COMMANDS } from './worktree-commands.js';
import { BEST_OF_COMMAND } from './best-of-command.js';
import { BUDGET_COMMANDS, taskSpendLines } from './budget-commands.js';
import { SUPERVISION_COMMANDS } from './supervision-commands.js';
import { SETTINGS_COMMANDS } from './settings-commands.js';
import { SUMMARY_COMMAND } from './summary-command.js';
import { REWIND_COMMAND } from './rewind-command.js';
import { notInterruptedNote } from '../state/interrupt-note.js';

export const COMMANDS: SlashCommand[] = [
  {
    name: 'help',
    description: 'list commands and keys',
    run: () => ({ kind: 'view', view: 'help' }),
  },
  {
    name: 'tasks',
    description: 'the task board (also Ctrl+T)',
    run: () => ({ kind: 'view', view: 'tasks' }),
  },
  {
    name: 'team',
    description: 'the roster: status, task, tokens, cost, context, last activity',
    run: () => ({ kind: 'view', view: 'team' }),
  },
  {
    name: 'backlog',
    description: "the backlog's issues: phase, approver, branch, pull request, checks, cost; Enter opens an issue's teammate",
    run: (context) => {
      context.controller.refreshBacklog();
      return { kind: 'view', view: 'backlog' };
    },
  },
  {
    name: 'workflows',
    description: 'the workflow run: phases, agents, tokens, time; p pause/resume, r restart an agent, s stop',
    run: () => ({ kind: 'view', view: 'workflows' }),
  },
  {
    name: 'workflow',
    args: 'run FILE',
    description: 'run a workflow module on the team (docs: workflows); /workflows shows it',
    async run(context, args) {
      const [verb, file] = firstWord(args);
      if (verb !== 'run' || !file.trim()) return usage(this);
      try {
        await context.controller.runWorkflow(file.trim());
        return { kind: 'view', view: 'workflows' };
      } catch (error) {
        return { kind: 'error', message: (error as Error).message };
      }
    },
  },
  {
    name: 'grid',
    description: "every agent's latest output at once, tiled (also Ctrl+G); Enter on a tile opens its pane",
    run: () => ({ kind: 'view', view: 'grid' }),
  },
  {
    name: 'approvals',
    description: 'tool calls waiting for you (also Ctrl+Y): y approve, n deny, a approve always',
    run: () => ({ kind: 'view', view: 'approvals' }),
  },
  {
    name: 'shell',
    args: '[COMMAND]',
    description: 'your shell in a pane (keys go to it; !cmd from any pane runs cmd there)',
    run: (context, args) => attempt(() => context.controller.shell(args.trim() || undefined)),
  },
  {
    name: 'spawn',
    args: 'NAME ROLE PROMPT',
    description: 'start a teammate',
    run(context, args) {
      const [name, rest] = firstWord(args);
      const [role, prompt] = firstWord(rest);
      if (!name || !role || !prompt) return usage(this);
      return attempt(() => context.controller.spawn(name, role, prompt));
    },
  },
  {
    name: 'send',
    args: 'NAME TEXT',
    description: 'send text to an agent as a user turn',
    complete: agentNames,
    run(context, args) {
      const [name, text] = firstWord(args);
      if (!name || !text) return usage(this);
      if (!context.state.agents[name]) return { kind: 'error', message: `no agent named '${name}'; agents: ${context.state.order.join(', ')}` };
      return attempt(async () => {
        await context.controller.sendTo(name, text);
        return `sent to ${name}`;
      });
    },
  },
  {
    name: 'broadcast',
    args: 'TEXT',
    description: 'send text to every live agent',
    run(context, args) {
      if (!args.trim()) return usage(this);
      return attempt(async () => {
        const count = await context.controller.broadcast(args.trim());
        return `sent to ${count} live agent${count === 1 ? '' : 's'}`;
      });
    },
  },
  {
    name: 'interrupt',
    args: '[NAME]',
    description: 'interrupt an agent (default: the one in view; also Esc)',
    complete: agentNames,
    run(context, args) {
      const name = args.trim() || context.focus;
      if (!context.state.agents[name]) return { kind: 'error', message: `no agent named '${name}'` };
      return context.controller.interrupt(name)
        ? { kind: 'ok', message: `interrupted ${name}` }
        : { kind: 'ok', message: notInterruptedNote(name, context.state.agents[name]) };
    },
  },
  {
    name: 'shutdown',
    args: 'NAME [--now]',
    description: 'ask a teammate to shut down (--now: stop it at once)',
    complete: teammateNames,
    run(context, args) {
      const [name, rest] = firstWord(args);
      if (!name || (rest && rest !== '--now')) return usage(this);
      return attempt(() => context.controller.shutdown(name, rest === '--now'));
    },
  },
  {
    name: 'compact',
    args: '[NAME] [FOCUS]',
    description: "summarise an agent's context",
    complete: agentNames,
    run(context, args) {
      // The first word names an agent when it is one; otherwise it all is the focus, for the agent in view.
      const [first, rest] = firstWord(args);
      const named = first !== '' && context.state.agents[first] !== undefined;
      const name = named ? first : context.focus;
      const focus = named ? rest : args.trim();
      return attempt(() => context.controller.compact(name, focus || undefined));
    },
  },
  {
    name: 'cost',
    description: 'spend per agent and per task; cache reads and writes, and those read across agents',
    run(context) {
      const agents = context.state.order.flatMap((name) => context.state.agents[name] ?? []);
      const lines = agents.map((agent) => {
        // Its first call's reads: the prefix (tools, its role's system block) a teammate or an earlier run wrote
        // (docs/cost.md#a-prefix-shared-by-the-team): a lead alone reads what the last run in this workspace wrote.
        const shared = agent.sharedCacheReadTokens ? ` (${agent.sharedCacheReadTokens} of them on its first call, written by another agent or run)` : '';
        return `${agent.name}: $${agent.costUsd.toFixed(4)} (${agent.inputTokens} in: ${agent.cacheReadTokens} cache reads at 0.1×${shared}, ${agent.cacheWriteTokens} cache writes at 1.25×; ${agent.outputTokens} out)`;
      });
      const sum = (of: (agent: (typeof agents)[number]) => number) => agents.reduce((total, agent) => total + of(agent), 0);
      const input = sum((agent) => agent.inputTokens);
      const reads = sum((agent) => agent.cacheReadTokens);
      const cache = `cache: ${reads} read (${input ? Math.round((100 * reads) / input) : 0}% of input), ${sum((agent) => agent.cacheWriteTokens)} written; across agents: ${sum((agent) => agent.sharedCacheReadTokens)} read by first calls from a prefix another agent or run wrote`;
      return {
        kind: 'page',
        title: 'Cost: spend per agent and per task',
        lines: [...lines, `total: $${sum((agent) => agent.costUsd).toFixed(4)}`, cache, ...taskSpendLines(context)],
      };
    },
  },
  {
    name: 'model',
    args: '[MODEL]',
    description: 'show or set the model of the lead and new teammates',
    run(context, args) {
      const model = args.trim();
      if (!model) return { kind: 'ok', message: `model: ${context.state.model}` };
      context.controller.setModel(model);
      return { kind: 'ok', message: `model set to ${model}` };
    },
  },
  {
    name: 'clear',
    args: '[yes]',
    description: "clear the pane in view and its agent's conversation (asks first: /clear yes does it)",
    run(context, args) {
      const who = context.focus;
      // Nothing of the conversation comes back into the agent's context after it: confirmed first.
      if (args.trim() !== 'yes') return { kind: 'ok', message: `/clear forgets ${who}'s conversation (its log keeps it); /clear yes does it` };
      if (!context.controller.clear(who)) return { kind: 'error', message: `${who} is in a turn; Esc interrupts it, then /clear yes` };
      return { kind: 'ok', message: `cleared ${who}: it starts its next turn with no earlier conversation` };
    },
  },
  {
    name: 'quit',
    description: 'leave huddle (also Ctrl+C twice)',
    run: () => ({ kind: 'quit' }),
  },
  ...WORKTREE_COMMANDS,
  BEST_OF_COMMAND,
  ...BUDGET_COMMANDS,
  ...SUPERVISION_COMMANDS,
  ...SETTINGS_COMMANDS,
  SUMMARY_COMMAND,
  REWIND_COMMAND,
];
