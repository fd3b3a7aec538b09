// /summary: the run record so far (runtime/record), written to .team/logs/run-<stamp>.json and
// shown as a view: tasks done and by whom, files and commits, tests, commands, permissions,
// reviews, cost per agent and task, tokens and the cache ratio, model calls, wall time.
import { attempt } from './helpers.js';
import type { CommandResult, SlashCommand } from './types.js';

export const SUMMARY_COMMAND: SlashCommand = {
  name: 'summary',
  description: 'the run record: tasks, files, commits, tests, commands, permissions, reviews, cost, cache',
  async run(context): Promise<CommandResult> {
    const failed = await attempt(async () => {
      await context.controller.summary();
      return undefined;
    });
    return failed.kind === 'error' ? failed : { kind: 'view', view: 'summary' };
  },
};
