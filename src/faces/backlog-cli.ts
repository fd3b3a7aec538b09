// `huddle run --backlog SOURCE` and `huddle merge ISSUE|BRANCH` (docs/backlog.md): a backlog taken in
// (the local `.team/backlog/*.md`, or GitHub issues), worked through headless by the team, each
// issue shipped as a branch and a pull request; and a reviewed branch merged without a GitHub.
import { parseArgs } from 'node:util';
import path from 'node:path';
import type { CliOptions } from '../session/cli-options.js';
import { runHeadless, type HeadlessDriver } from '../headless.js';
import { BacklogRun } from '../session/backlog-run.js';
import { orderIssues } from '../runtime/backlog/issue.js';
import { planChoices, prepareBacklog } from '../session/backlog-setup.js';
import { pinRepository, runGit } from '../runtime/git/host-git.js';
import { issueLine } from '../runtime/record/backlog-record.js';
import { MergeConflictError, mergeWorktree, WorktreeError } from '../runtime/workspace/worktree.js';
import { resolveModelAlias } from '../runtime/model/model-aliases.js';
import { scrub } from '../runtime/secrets.js';
import { FileBoard } from '../runtime/store/file/board/file-board.js';
import { Workspace } from '../runtime/workspace/workspace.js';

const RUN_OPTIONS = {
  backlog: { type: 'string', multiple: true },
  base: { type: 'string' },
  'github-api-url': { type: 'string' },
  'pr-repo': { type: 'string' },
  remote: { type: 'string' },
  verify: { type: 'string' },
  'plan-approval': { type: 'string' },
  playbook: { type: 'string' },
  'output-format': { type: 'string' },
  cwd: { type: 'string' },
  model: { type: 'string' },
  'api-key-file': { type: 'string' },
  'budget-usd': { type: 'string' },
  'permission-mode': { type: 'string' },
  trust: { type: 'boolean' },
  fresh: { type: 'boolean' },
  resume: { type: 'boolean' },
} as const;

function usage(message: string): number {
  process.stderr.write(`huddle: ${message}\nRun 'huddle --help' for usage.\n`);
  return 2;
}

function fail(message: string, code = 2): number {
  process.stderr.write(`huddle: ${scrub(message)}\n`);
  return code;
}

function parseRun(argv: string[]) {
  return parseArgs({ args: argv, options: RUN_OPTIONS, allowPositionals: false });
}

export async function runBacklogCommand(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parseRun>['values'];
  try {
    values = parseRun(argv).values;
  } catch (error) {
    return usage(`huddle run: ${(error as Error).message.split('. ')[0]}`);
  }
  const root = path.resolve(values.cwd ?? process.cwd());
  // --backlog may be given more than once: one backlog of every source's issues (docs/backlog.md#sources).
  const sources = values.backlog?.length ? values.backlog : ['local'];
  const choices = planChoices(root, values.playbook, values['plan-approval']);
  if ('error' in choices) return choices.usage ? usage(choices.error) : fail(choices.error);
  const { playbook, runChoices, planFirst } = choices;
  const format = values['output-format'] ?? 'text';
  if (format !== 'text' && format !== 'json') return usage(`huddle run's --output-format takes text or json, not '${format}'`);
  const budget = values['budget-usd'] === undefined ? undefined : Number(values['budget-usd']);
  if (budget !== undefined && !(budget > 0)) return usage(`--budget-usd takes a number above 0, not '${values['budget-usd']}'`);
  const mode = values['permission-mode'];
  if (mode !== undefined && !['plan', 'ask', 'auto'].includes(mode)) return usage(`--permission-mode takes plan, ask or auto, not '${mode}'`);

  const setup = await prepareBacklog({
    root,
    sources,
    base: values.base,
    githubApiUrl: values['github-api-url'],
    prRepo: values['pr-repo'],
    remote: values.remote,
  });
  if ('error' in setup) return setup.code === 2 && setup.usage ? usage(setup.error) : fail(setup.error, setup.code);
  const loaded = await setup.load();
  if ('error' in loaded) return fail(loaded.error, 1);
  const ordered = orderIssues(loaded);
  for (const skipped of ordered.skipped) process.stderr.write(scrub(`huddle: skipped ${skipped.source}: ${skipped.reason}\n`));
  if (ordered.issues.length === 0) return fail(`the backlog (${setup.source}) has no issue to work on`);
  if (!setup.remote)
    process.stderr.write(`huddle: the workspace has no remote '${values.remote ?? 'origin'}': branches stay here, merged with huddle merge ISSUE\n`);

  const options: CliOptions = {
    prompt: '',
    promptSource: 'argument',
    json: false,
    resume: values.resume ?? false,
    fresh: values.fresh ?? false,
    cwd: root,
    model: values.model === undefined ? undefined : resolveModelAlias(values.model),
    apiKeyFile: values['api-key-file'],
    maxTurns: undefined,
    ...(mode ? { permissionMode: mode as 'plan' | 'ask' | 'auto' } : {}),
    budget: budget === undefined ? {} : { usd: budget },
    command: undefined,
    outputFormat: format,
    ...(values.trust ? { trust: true } : {}),
    ...(runChoices.length ? { runChoices } : {}),
  };
  let run: BacklogRun | undefined;
  const driver: HeadlessDriver = {
    opened: async (session) => {
      run = new BacklogRun(session, setup.runOptions(ordered.issues, { verify: values.verify, planFirst, playbook }));
      return run.start();
    },
    ended: async () => {
      // First nothing new starts (the team stops next), then the record of where each issue is.
      run?.close();
      const backlogRecord = run ? await run.records() : [];
      return { backlog: backlogRecord, lines: backlogRecord.map(issueLine) };
    },
  };
  return runHeadless(options, driver);
}

/**
 * Why an issue's branch is not ready to merge: its task on this workspace's board is not completed
 * (not approved yet). A branch with no such task (not from a backlog run here) is the person's call.
 */
async function notReviewed(root: string, name: string): Promise<string | undefined> {
  const number = /^issue-(\d+)(?:-|$)/.exec(name)?.[1];
  if (!number) return undefined;
  const board = new FileBoard(new Workspace(root).tasksDir);
  try {
    // A board that cannot be read holds no task to go by: the branch is the person's call.
    const tasks = await board.list().catch(() => []);
    const task = tasks.find((t) => t.subject.startsWith(`Issue #${number}: `));
    if (!task || task.status === 'completed') return undefined;
    return `issue #${number} is not reviewed yet: its task #${task.id} is ${task.status}; merge huddle/${name} once it is approved (or with git merge, by hand)`;
  } finally {
    board.close();
  }
}

/** `huddle merge ISSUE|BRANCH`: a reviewed issue's branch into the workspace's current branch, or one line saying why not. */
export async function runMergeCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { cwd: { type: 'string' } }, allowPositionals: true });
  } catch (error) {
    return usage(`huddle merge: ${(error as Error).message.split('. ')[0]}`);
  }
  const [what, ...extra] = parsed.positionals;
  if (!what || extra.length) return usage('usage: huddle merge ISSUE|BRANCH');
  const root = path.resolve(parsed.values.cwd ?? process.cwd());
  if (!pinRepository(root)) return fail(`${root} is not a git repository`);
  let name: string | undefined;
  if (/^#?\d+$/.test(what)) {
    const number = what.replace('#', '');
    const refs = await runGit(root, ['for-each-ref', '--format=%(refname:short)', `refs/heads/huddle/issue-${number}-*`, `refs/heads/huddle/issue-${number}`], {
      pin: pinRepository(root),
    });
    name = refs.stdout.split('\n').find(Boolean)?.slice('huddle/'.length);
    if (!name) return fail(`no branch huddle/issue-${number}-… in ${root}: was issue #${number} part of a backlog run here?`);
  } else {
    name = what.startsWith('huddle/') ? what.slice('huddle/'.length) : what;
  }
  const unreviewed = await notReviewed(root, name);
  if (unreviewed) return fail(unreviewed, 1);
  try {
    const result = await mergeWorktree(root, name);
    process.stdout.write(`${result.message}\n`);
    return 0;
  } catch (error) {
    if (error instanceof MergeConflictError)
      return fail(`merging huddle/${name} conflicts in ${error.files.join(', ')}; nothing was merged, both branches as they were`, 1);
    if (error instanceof WorktreeError) return fail(error.message, 1);
    throw error;
  }
}
