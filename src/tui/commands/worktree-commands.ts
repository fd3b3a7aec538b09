// Slash commands for teammates' git worktrees: /merge, /diff and /worktree.
import { LEAD_NAME } from '../../agents/prompts.js';
import type { CommandContext, CommandResult, SlashCommand } from './types.js';

const teammateNames = (context: CommandContext, partial: string) =>
  context.state.order.filter((name) => name !== LEAD_NAME && name.startsWith(partial.trim()));

function usage(command: SlashCommand): CommandResult {
  return { kind: 'error', message: `usage: /${command.name}${command.args ? ` ${command.args}` : ''}` };
}

async function attempt(work: () => Promise<string | undefined>): Promise<CommandResult> {
  try {
    const message = await work();
    return message ? { kind: 'ok', message } : { kind: 'ok' };
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
}

/** One teammate name and nothing else, or undefined. */
function oneName(args: string): string | undefined {
  const words = args.trim().split(/\s+/).filter(Boolean);
  return words.length === 1 ? words[0] : undefined;
}

export const WORKTREE_COMMANDS: SlashCommand[] = [
  {
    name: 'merge',
    args: 'NAME',
    description: "merge a teammate's worktree branch (huddle/NAME) into the workspace's branch",
    complete: teammateNames,
    run(context, args) {
      const name = oneName(args);
      if (!name) return usage(this);
      return attempt(() => context.controller.mergeWorktree(name, context.focus));
    },
  },
  {
    name: 'diff',
    args: 'NAME',
    description: "show a teammate's worktree against its base, in its pane",
    complete: teammateNames,
    run(context, args) {
      const name = oneName(args);
      if (!name) return usage(this);
      return attempt(() => context.controller.showDiff(name));
    },
  },
  {
    name: 'worktree',
    args: '[list | remove NAME [--force]]',
    description: 'list teammate worktrees, or remove one (--force: also with unmerged or uncommitted work)',
    complete: (_context, partial) => ['list', 'remove'].filter((word) => word.startsWith(partial.trim())),
    run(context, args) {
      const words = args.trim().split(/\s+/).filter(Boolean);
      const [sub = 'list', name, flag, ...extra] = words;
      if (sub === 'list' && words.length <= 1) return attempt(() => context.controller.listWorktrees(context.focus));
      if (sub !== 'remove' || !name || name.startsWith('-') || extra.length > 0 || (flag !== undefined && flag !== '--force')) return usage(this);
      return attempt(() => context.controller.removeWorktree(name, flag === '--force'));
    },
  },
];
