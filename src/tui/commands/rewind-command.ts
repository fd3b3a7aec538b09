// /rewind: the workspace's checkpoints (runtime/workspace/checkpoints.ts), taken before agents'
// commands and file writes, as a page; `/rewind ID` says what a rewind to it would do and asks for a
// `yes`; `/rewind ID yes` does it (a checkpoint of the state now comes first, so it can be undone).
// `--files PATH…` puts back only those files.
import { attempt } from './helpers.js';
import type { CommandResult, SlashCommand } from './types.js';

export const REWIND_COMMAND: SlashCommand = {
  name: 'rewind',
  args: '[ID [yes] [--files PATH…]]',
  description: 'checkpoints of the workspace; put it back as it was before an agent call (asks first)',
  async run(context, args): Promise<CommandResult> {
    const words = args.trim().split(/\s+/).filter(Boolean);
    const filesAt = words.indexOf('--files');
    const files = filesAt >= 0 ? words.slice(filesAt + 1) : [];
    const [id, confirm, ...extra] = filesAt >= 0 ? words.slice(0, filesAt) : words;
    if (!id) {
      const lines = await context.controller.listCheckpoints().catch((error: unknown) => error as Error);
      if (lines instanceof Error) return { kind: 'error', message: lines.message };
      if (!lines.length) return { kind: 'ok', message: 'no checkpoints yet: huddle takes one before each command or file write of an agent' };
      return { kind: 'page', title: `Checkpoints (${lines.length}), newest first · /rewind ID puts the workspace back as it was then`, lines };
    }
    if (extra.length || (confirm !== undefined && confirm !== 'yes') || (filesAt >= 0 && !files.length))
      return { kind: 'error', message: `usage: /rewind ${this.args}` };
    if (confirm !== 'yes') {
      const line = await context.controller.describeCheckpoint(id);
      if (!line) return { kind: 'error', message: `no checkpoint '${id}' (/rewind lists them)` };
      const what = files.length ? files.join(', ') : "the workspace's files, refs and index";
      return {
        kind: 'ok',
        message: `rewind ${what} to ${line}? A checkpoint of now comes first. To go ahead: /rewind ${id} yes${files.length ? ` --files ${files.join(' ')}` : ''}`,
      };
    }
    return attempt(() => context.controller.rewind(id, files));
  },
};
