// Slash commands for teammates' git worktrees: /merge, /diff and /worktree.
import type { SlashCommand } from './types.js';
import { attempt, oneName, teammateNames, usage } from './helpers.js';

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
    async run(context, args) {
      const words = args.trim().split(/\s+/).filter(Boolean);
      const [sub = 'list', name, flag, ...extra] = words;
      if (sub === 'list' && words.length <= 1) {
        const lines = await context.controller.listWorktrees().catch((error: unknown) => error as Error);
        if (lines instanceof Error) return { kind: 'error', message: lines.message };
        if (lines.length === 0) return { kind: 'ok', message: 'no teammate worktrees (spawn with worktree: true to make one)' };
        return { kind: 'page', title: `Teammate worktrees (${lines.length}) · /diff NAME, /merge NAME, /worktree remove NAME`, lines };
      }
      if (sub !== 'remove' || !name || name.startsWith('-') || extra.length > 0 || (flag !== undefined && flag !== '--force')) return usage(this);
      return attempt(() => context.controller.removeWorktree(name, flag === '--force'));
    },
  },
];
