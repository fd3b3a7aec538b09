// /best-of N [--models A,B] [--agents huddle,claude-code] [--verify "CMD"] TASK (docs/console.md#best-of):
// the task on N candidates in their own worktrees, compared in a view; /best-of alone reopens it.
import { AGENT_KINDS, type AgentKind } from '../../runtime/vocabulary.js';
import { resolveModelAlias } from '../../runtime/model/model-aliases.js';
import type { SlashCommand } from './types.js';
import { attempt, usage } from './helpers.js';

/** Words of the line; "…" or '…' keep spaces inside one (a --verify command). */
function words(args: string): string[] {
  return [...args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3] ?? '');
}

const list = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

export const BEST_OF_COMMAND: SlashCommand = {
  name: 'best-of',
  args: '[N [--models A,B] [--agents huddle,claude-code] [--verify "CMD"] TASK]',
  description: 'run TASK on N candidates, each in its own worktree; compare diffs, verify, cost and a verdict, then pick one',
  complete: (_context, partial) =>
    ['--models', '--agents', '--verify'].filter((flag) => flag.startsWith(partial.trim().split(/\s+/).at(-1) ?? '') && partial.includes(' ')),
  run(context, args) {
    if (!args.trim()) {
      const reopened = context.controller.reopenBestOf();
      return reopened ? { kind: 'ok', message: reopened } : { kind: 'error', message: 'no best-of run yet: /best-of N TASK starts one' };
    }
    const [count, ...rest] = words(args);
    const n = Number(count);
    if (!/^\d+$/.test(count ?? '') || n < 2 || n > 8) return usage(this);
    const options: { task: string; n: number; models?: string[]; agents?: Array<'huddle' | AgentKind>; verify?: string } = { task: '', n };
    const task: string[] = [];
    for (let i = 0; i < rest.length; i++) {
      const word = rest[i]!;
      const value = rest[i + 1];
      if (word === '--models' || word === '--agents' || word === '--verify') {
        if (value === undefined) return { kind: 'error', message: `${word} needs a value` };
        i++;
        if (word === '--models') options.models = list(value).map(resolveModelAlias);
        else if (word === '--verify') options.verify = value;
        else {
          const agents = list(value);
          const unknown = agents.find((agent) => agent !== 'huddle' && !(AGENT_KINDS as readonly string[]).includes(agent));
          if (unknown) return { kind: 'error', message: `--agents takes huddle or ${AGENT_KINDS.join(', ')}, not '${unknown}'` };
          options.agents = agents as Array<'huddle' | AgentKind>;
        }
        continue;
      }
      task.push(word);
    }
    options.task = task.join(' ').trim();
    if (!options.task) return { kind: 'error', message: '/best-of N TASK: the task is missing' };
    return attempt(() => Promise.resolve(context.controller.startBestOf(options)));
  },
};
