// `huddle best-of N "TASK"` and `huddle pick` (docs/best-of.md): the task run on N candidates at once, each
// in its own worktree; the comparison printed (stdout; --output-format json: the record) and kept in
// .team/best-of/<id>.json. Without --pick the candidates wait for `huddle pick K|auto|none`, which
// merges one into the workspace's branch and removes them all. Exit 0 done, 1 the run or the pick
// failed (one line says why, nothing lost), 2 usage, 130 interrupted.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { scrub } from '../runtime/secrets.js';
import { AGENT_KINDS, type AgentKind } from '../runtime/settings/schema.js';
import type { BestOfRecord } from '../runtime/record/best-of-record.js';
import { comparisonLines } from '../runtime/record/best-of-lines.js';
import { resolveModelAlias } from '../runtime/model/model-aliases.js';
import { openControl } from '../session/control-intents.js';
import { continueTeam } from '../session/continue-team.js';
import { INTERRUPTED, untilInterrupted } from '../session/until-interrupted.js';
import { BestOfRun } from '../session/best-of-run.js';
import { pickBestOf, type PickShipping } from '../session/best-of-pick.js';
import { githubClient } from '../runtime/forge/github.js';
import { parseRepoName, repoOfRemote } from '../runtime/forge/github-repo.js';
import { githubToken } from '../runtime/forge/github-token.js';
import { remoteUrl } from '../runtime/forge/push.js';

const OPTIONS = {
  models: { type: 'string' },
  agents: { type: 'string' },
  verify: { type: 'string' },
  'reviewer-model': { type: 'string' },
  pick: { type: 'string' },
  'output-format': { type: 'string' },
  cwd: { type: 'string' },
  team: { type: 'string' },
  trust: { type: 'boolean' },
} as const;

function usage(message: string): number {
  process.stderr.write(`huddle: ${message}\nRun 'huddle --help' for usage.\n`);
  return 2;
}

function fail(message: string, code = 1): number {
  process.stderr.write(`huddle: ${scrub(message)}\n`);
  return code;
}

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

export async function runBestOfCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    return usage(`huddle best-of: ${(error as Error).message.split('. ')[0]}`);
  }
  const { values, positionals } = parsed;
  const [count, ...words] = positionals;
  const n = Number(count);
  if (!count || !/^\d+$/.test(count) || n < 2 || n > 8) return usage('usage: huddle best-of N "TASK" (N from 2 to 8)');
  const task = words.join(' ').trim();
  if (!task) return usage('huddle best-of N "TASK": the task is missing');
  const agents = list(values.agents);
  const unknown = agents.filter((agent) => agent !== 'huddle' && !(AGENT_KINDS as readonly string[]).includes(agent));
  if (unknown.length) return usage(`--agents takes huddle or ${AGENT_KINDS.join(', ')}, not '${unknown[0]}'`);
  const format = values['output-format'] ?? 'text';
  if (format !== 'text' && format !== 'json') return usage(`--output-format takes text or json, not '${format}'`);
  const pick = values.pick;
  if (pick !== undefined && !/^(auto|none|\d+|[a-z][a-z0-9_-]*)$/.test(pick)) return usage(`--pick takes auto, none or a candidate (1…${n}), not '${pick}'`);

  const opened = await continueTeam({ cwd: values.cwd, team: values.team, trust: values.trust });
  if (opened === 'quit') return 0;
  if ('error' in opened) return fail(opened.error, 2);
  const session = opened;
  await openControl(session, 'best-of');
  const say = (line: string) => process.stderr.write(session.scrub(`huddle best-of: ${line}\n`));

  const { interrupted, stop: stopListening } = untilInterrupted();

  let record: BestOfRecord | undefined;
  let run: BestOfRun | undefined;
  let code = 0;
  try {
    run = new BestOfRun(session, {
      task,
      n,
      models: list(values.models).map(resolveModelAlias),
      agents: agents as Array<'huddle' | AgentKind>,
      verify: values.verify,
      reviewerModel: values['reviewer-model'] === undefined ? undefined : resolveModelAlias(values['reviewer-model']),
      say,
    });
    const outcome = await Promise.race([run.run(), interrupted]);
    if (outcome === 'interrupted') {
      run.abandon('interrupted');
      say('interrupted; the candidates keep their worktrees as they are (huddle pick K merges one, huddle pick none removes them)');
      code = INTERRUPTED;
    } else record = outcome;
  } catch (error) {
    run?.abandon('the run failed');
    say(`failed: ${(error as Error).message.split('\n')[0]}`);
    code = 1;
  }
  if (record && pick !== undefined) {
    try {
      record = await pickBestOf(session.workspace.root, pick, record.id);
    } catch (error) {
      say(`not picked: ${(error as Error).message.split('\n')[0]}`);
      code = 1;
    }
  }
  await session.close({ reason: 'best-of done', resumable: false, record: record ? { bestOf: [record] } : {} });
  stopListening();
  if (record) {
    const out = format === 'json' ? JSON.stringify(record) : [...comparisonLines(record), ...record.discarded].join('\n');
    process.stdout.write(`${session.scrub(out)}\n`);
    if (record.outcome.kind === 'waiting' && format === 'text')
      process.stdout.write(`pick one: huddle pick K (1…${n}), huddle pick auto (the reviewer's), or huddle pick none\n`);
  }
  return code;
}

const PICK_OPTIONS = {
  cwd: { type: 'string' },
  id: { type: 'string' },
  'output-format': { type: 'string' },
  pr: { type: 'boolean' },
  remote: { type: 'string' },
  'pr-repo': { type: 'string' },
  'github-api-url': { type: 'string' },
} as const;

/** --pr: where the pick goes (the remote, and GitHub when the remote is there or --pr-repo names it); a string says why not. */
async function shipping(root: string, values: { remote?: string; 'pr-repo'?: string; 'github-api-url'?: string }): Promise<PickShipping | string> {
  const name = values.remote ?? 'origin';
  const url = await remoteUrl(root, name);
  if (!url) return `the workspace has no remote '${name}' to push the pick to; merge it here instead (huddle pick K), or name one with --remote`;
  const apiUrl = values['github-api-url'];
  if (apiUrl && !URL.canParse(apiUrl)) return `--github-api-url takes a URL (https://HOST/api/v3), not '${apiUrl}'`;
  const host = apiUrl ? new URL(apiUrl).hostname : 'github.com';
  const repo = values['pr-repo'] ? parseRepoName(values['pr-repo']) : repoOfRemote(url, host);
  if (values['pr-repo'] && !repo) return `--pr-repo takes OWNER/REPO, not '${values['pr-repo']}'`;
  const token = githubToken(process.env, apiUrl ? host : undefined);
  return { remote: { name, url }, token, ...(repo ? { github: { client: githubClient({ token, baseUrl: apiUrl }), repo } } : {}) };
}

/** `huddle pick [--id ID] K|NAME|auto|none [--pr]`: the latest best-of run's pick (or run ID's). */
export async function runPickCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: PICK_OPTIONS, allowPositionals: true });
  } catch (error) {
    return usage(`huddle pick: ${(error as Error).message.split('. ')[0]}`);
  }
  const [choice, ...extra] = parsed.positionals;
  if (!choice || extra.length) return usage('usage: huddle pick K|NAME|auto|none [--id ID] [--pr]');
  const id = parsed.values.id === undefined ? undefined : Number(parsed.values.id);
  if (id !== undefined && !(Number.isInteger(id) && id > 0)) return usage(`--id takes a best-of run's number, not '${parsed.values.id}'`);
  const root = path.resolve(parsed.values.cwd ?? process.cwd());
  if (parsed.values.pr && choice === 'none') return usage('--pr opens the pick as a pull request: pick a candidate (K, NAME or auto), not none');
  const ship = parsed.values.pr ? await shipping(root, parsed.values) : undefined;
  if (typeof ship === 'string') return fail(ship);
  try {
    const record = await pickBestOf(root, choice, id, ship);
    const out =
      parsed.values['output-format'] === 'json'
        ? JSON.stringify(record)
        : [record.outcome.kind === 'waiting' ? '' : (record.outcome as { message: string }).message, ...record.discarded].filter(Boolean).join('\n');
    process.stdout.write(`${out}\n`);
    return 0;
  } catch (error) {
    return fail((error as Error).message.split('\n')[0]!);
  }
}
