// `huddle watch --backlog SOURCE` (docs/backlog.md#watching-a-backlog): a headless backlog run that
// does not end when its issues are done, but reads the source again every --interval seconds and
// takes new issues in, within its guards; one line per decision on stderr. Ctrl+C stops it as it
// stops any headless run: the team is left resumable (huddle run --backlog SOURCE --resume goes on).
import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { CliOptions } from '../session/cli-options.js';
import { runHeadless, type HeadlessDriver } from '../headless.js';
import { BacklogRun } from '../session/backlog-run.js';
import { planChoices, prepareBacklog } from '../session/backlog-setup.js';
import { BacklogWatch } from '../session/backlog-watch.js';
import { issueLine } from '../runtime/record/backlog-record.js';
import { resolveModelAlias } from '../runtime/model/model-aliases.js';
import { scrub } from '../runtime/secrets.js';

function positive(what: string, whole: boolean) {
  return (text: string): number => {
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value)))
      throw new InvalidArgumentError(`${what} takes a ${whole ? 'whole ' : ''}number above 0, not '${text}'`);
    return value;
  };
}

function program(): Command {
  return new Command('huddle watch')
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined })
    .helpOption(false)
    .allowExcessArguments(false)
    .requiredOption('--backlog <source>')
    .option('--interval <seconds>', '', positive('--interval', false), 60)
    .option('--max-concurrent <n>', '', positive('--max-concurrent', true), 2)
    .option('--pause-when-prs <n>', '', positive('--pause-when-prs', true))
    .option('--base <branch>')
    .option('--github-api-url <url>')
    .option('--pr-repo <repo>')
    .option('--remote <name>')
    .option('--verify <command>')
    .option('--plan-approval <approver>')
    .option('--playbook <name>')
    .option('--cwd <dir>')
    .option('--model <id>')
    .option('--api-key-file <file>')
    .option('--budget-usd <n>', '', positive('--budget-usd', false))
    .option('--trust')
    .option('--fresh')
    .option('--resume');
}

interface WatchFlags {
  backlog: string;
  interval: number;
  maxConcurrent: number;
  pauseWhenPrs?: number;
  base?: string;
  githubApiUrl?: string;
  prRepo?: string;
  remote?: string;
  verify?: string;
  planApproval?: string;
  playbook?: string;
  cwd?: string;
  model?: string;
  apiKeyFile?: string;
  budgetUsd?: number;
  trust?: boolean;
  fresh?: boolean;
  resume?: boolean;
}

function usage(message: string): number {
  process.stderr.write(`huddle: huddle watch: ${message}\nRun 'huddle --help' for usage.\n`);
  return 2;
}

export async function runWatchCommand(argv: string[]): Promise<number> {
  let flags: WatchFlags;
  try {
    flags = program().parse(argv, { from: 'user' }).opts<WatchFlags>();
  } catch (error) {
    if (error instanceof CommanderError) return usage(error.message.replace(/^error: /, ''));
    throw error;
  }
  const root = path.resolve(flags.cwd ?? process.cwd());
  const choices = planChoices(root, flags.playbook, flags.planApproval);
  if ('error' in choices) return choices.usage ? usage(choices.error) : fail(choices.error, 2);
  const { playbook, runChoices, planFirst } = choices;
  const setup = await prepareBacklog({
    root,
    sources: [flags.backlog],
    base: flags.base,
    githubApiUrl: flags.githubApiUrl,
    prRepo: flags.prRepo,
    remote: flags.remote,
  });
  if ('error' in setup) return setup.usage ? usage(setup.error) : fail(setup.error, setup.code);
  if (!setup.remote)
    process.stderr.write(`huddle: the workspace has no remote '${flags.remote ?? 'origin'}': branches stay here, merged with huddle merge ISSUE\n`);
  const say = (line: string) => process.stderr.write(scrub(`huddle watch: ${line}\n`));

  const options: CliOptions = {
    prompt: '',
    promptSource: 'argument',
    json: false,
    resume: flags.resume ?? false,
    fresh: flags.fresh ?? false,
    cwd: root,
    model: flags.model === undefined ? undefined : resolveModelAlias(flags.model),
    apiKeyFile: flags.apiKeyFile,
    maxTurns: undefined,
    budget: flags.budgetUsd === undefined ? {} : { usd: flags.budgetUsd },
    command: undefined,
    outputFormat: 'text',
    ...(flags.trust ? { trust: true } : {}),
    ...(runChoices.length ? { runChoices } : {}),
  };
  let run: BacklogRun | undefined;
  let timer: NodeJS.Timeout | undefined;
  let release: (() => void) | undefined;
  let stopped = false;
  const driver: HeadlessDriver = {
    opened: async (session) => {
      const started = new BacklogRun(session, setup.runOptions([], { verify: flags.verify, planFirst, playbook }));
      run = started;
      const prompt = await started.start();
      // The run never settles on its own: it watches until Ctrl+C.
      release = session.backlogParts().hold();
      const watch = new BacklogWatch({
        root,
        run: started,
        load: setup.load,
        github: setup.github,
        maxConcurrent: flags.maxConcurrent,
        pauseWhenPrs: flags.pauseWhenPrs,
        taskSubjects: async () => (await session.backlogParts().board.list()).map((task) => task.subject),
        say,
      });
      say(
        `watching ${flags.backlog} every ${flags.interval} s (at most ${flags.maxConcurrent} in flight` +
          `${flags.pauseWhenPrs ? `, paused while ${flags.pauseWhenPrs} pull requests await review` : ''}); Ctrl+C stops`,
      );
      const tick = async () => {
        try {
          await watch.tick();
        } catch (error) {
          say(`the tick failed: ${(error as Error).message.split('\n')[0]}; trying again on the next one`);
        }
        if (!stopped) timer = setTimeout(() => void tick(), flags.interval * 1000);
      };
      void tick();
      return `${prompt}\n\nhuddle watch takes new issues in as they come: huddle tells you of each one (its task, teammate and branch). Between them, wait.`;
    },
    ended: async () => {
      stopped = true;
      clearTimeout(timer);
      release?.();
      const backlogRecord = run ? await run.records() : [];
      run?.close();
      return { backlog: backlogRecord, lines: backlogRecord.map(issueLine) };
    },
  };
  return runHeadless(options, driver);
}

function fail(message: string, code: number): number {
  process.stderr.write(`huddle: ${scrub(message)}\n`);
  return code;
}
