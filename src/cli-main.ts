// huddle's command line, loaded by src/cli.ts once the compile cache is on: parses the arguments and
// imports the one face that runs (headless, the console, a subcommand) from its own bundle chunk, so
// `--version` and `--help` load nothing else.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Command, CommanderError } from 'commander';
import type { CliOptions, OutputFormat } from './session/cli-options.js';
import { redactUrl } from './runtime/store/team-url.js';
import { resolveModelAlias } from './runtime/model/model-aliases.js';
import {
  allowedCommandPrefixes,
  allowedToolsRefusal,
  disallowedToolsRefusal,
  mapPermissionMode,
  parseToolRules,
  REFUSED_FLAGS,
  parseSettingSources,
} from './session/claude-flags.js';

declare const __HUDDLE_VERSION__: string;
const VERSION = typeof __HUDDLE_VERSION__ === 'string' ? __HUDDLE_VERSION__ : '0.0.0-dev';

const HELP = `huddle ${VERSION}: a terminal team console for AI coding agents

Usage:
  huddle [--cwd DIR]                    open the console in a workspace (default: current directory)
  huddle -p "PROMPT" [--json]           run the team headless; print the lead's final text
  echo "PROMPT" | huddle -p             the same, the prompt read from stdin (also -p -)
  huddle demo                           the console driven by a built-in scripted model (no key needed)
  huddle status [--json]                the agents of the huddle running in the workspace, with statuses
  huddle send NAME TEXT                 a message to agent NAME of that huddle (delivered once, from "user")
  huddle interrupt NAME                 interrupt agent NAME's turn in that huddle
  huddle approvals [--json]             what waits for you in that huddle (plans, a workflow's gates, questions)
  huddle approve [ID] [--deny] [--message TEXT] [--edit FILE]
                                        answer it: approve (a plan: with FILE as your edit of it),
                                        or --deny, telling the agent TEXT (--list: as huddle approvals)
  huddle workflow run FILE              run the phases of agents a workflow module exports; run again, it goes on
                                        where it stopped (docs/workflows.md)
  huddle best-of N "TASK" [--verify CMD] the task on N candidates, each in its own worktree (--models A,B,
                                        --agents huddle,claude-code); their diffs, verify, cost and a reviewer's
                                        verdict compared (--pick auto|K|none picks at once; docs/best-of.md)
  huddle pick K|auto|none [--pr]        merge candidate K of the last best-of run (--pr: open it as a pull
                                        request), remove the rest
  huddle rewind [ID [--files PATH…]]    the workspace's checkpoints (taken before agents' commands and writes);
                                        with ID: the workspace put back as it was then (itself undoable)
  huddle mcp --as NAME                  huddle's MCP server (stdio) for an external agent that is teammate NAME
                                        (of the team in --cwd, or on PostgreSQL with --team URL)
  huddle worker --team URL --slots N    a host for up to N teammates of a team on PostgreSQL, working in --cwd
  huddle doctor [--json]                the agent CLIs teammates would run here, their versions, and
                                        a warning for each outside the range huddle is tested with
  huddle prune --team URL [--dry-run] [--older-than DAYS] [TEAM…]
                                        remove teams from a PostgreSQL database: those archived by
                                        --fresh DAYS ago or more (default: retentionDays, 30), or the
                                        TEAMs named; a team whose lead runs is kept
  huddle prune --checkpoints [--dry-run] remove the checkpoints of workspaces whose directory no longer
                                        exists (judged by the path: mount the disk first); never others
  huddle run --backlog SOURCE [--playbook NAME] [--plan-approval lead|person|off|auto-after[:MIN]]
                                        work through a backlog headless: SOURCE is local (.team/backlog/*.md,
                                        the default) or github:OWNER/REPO?label=NAME (again for more); one
                                        branch, teammate and reviewed pull request per issue, following the
                                        playbook (issue-to-pr built in; docs/backlog.md, docs/playbooks.md)
  huddle watch --backlog SOURCE [--interval S] [--max-concurrent N] [--pause-when-prs N]
                                        take new issues in as they come, one line per decision on stderr;
                                        Ctrl+C stops (huddle run --backlog SOURCE --resume goes on)
  huddle --backlog SOURCE               the console, working through a backlog: /backlog shows each issue
  huddle merge ISSUE|BRANCH             merge a reviewed issue's branch into the current branch (no GitHub)
  huddle trust [--list | --revoke]      show and trust the workspace settings that widen what runs unasked
                                        (hooks, MCP servers, sandbox off…); --list: what is trusted and
                                        what waits; --revoke: forget this workspace's trust

Options:
  -p, --print PROMPT     headless: run PROMPT, print the lead's final text, exit;
                         without PROMPT (or with -) the prompt is read from stdin
      --prompt-file F    headless, the prompt read from the file F
      --output-format F  headless output: text (default: the lead's final text), json (one
                         result object) or stream-json (Claude Code's headless line format:
                         init, the lead's messages, the result)
      --verbose          accepted for scripts written for claude -p (stream-json needs it there)
      --json             headless: stream every event as one JSON object per line
      --resume [ID], -r, -c, --continue
                         continue the team left in the workspace (finished or not): the
                         lead's conversation, and the panes with what was said before
      --fresh            start a new team; the old state is archived under .team/archive/
      --cwd DIR          the workspace (default: current directory)
      --team URL         keep the team's state in PostgreSQL: postgres://USER@HOST/DB?team=NAME
                         (default team name: the workspace directory's); workers join it
      --slots N          huddle worker: teammates it runs at once (default 4)
      --model ID         the model (default: $HUDDLE_MODEL or claude-sonnet-4-6)
      --api-key-file F   read the API key from a file instead of $ANTHROPIC_API_KEY
      --max-turns N      model calls one agent may make in one turn (default 50)
      --budget-usd N     team budget in dollars; --budget-minutes N (wall time) and
      --budget-turns N   (model calls) likewise. At 80 % a warning; at the limit each agent
                         pauses before its next model call (console: Ctrl+Y, y extends, n
                         stops it; headless: the run stops with exit code 3). Per-agent limits:
                         "budget" in .team/settings.json or /budget in the console
      --trust            trust the workspace's settings files as they are now (hooks, MCP
                         servers, sandbox off…), and record it; without it a run whose
                         workspace settings widen what runs unasked is refused (exit 2)
      --permission-mode M
                         plan (read only), ask (commands off the allow-list wait for you;
                         the console's default) or auto (no questions; the headless default).
                         Destructive commands (rm -rf /, sudo, git push --force…) are
                         refused in every mode; Claude Code's default and acceptEdits
                         are ask, bypassPermissions is auto, dontAsk is ask with nobody asked

Claude Code's flags (docs/contract.md, "Claude Code flags"):
      --input-format stream-json
                         user messages and control requests on stdin: the Claude Agent
                         SDK drives huddle (with --output-format stream-json)
      --include-partial-messages   text as stream_event lines as it arrives
      --permission-prompt-tool stdio   questions to the caller as can_use_tool requests
      --session-id UUID, --resume UUID, --fork-session
                         the session id; --continue and --resume ID keep it
      --system-prompt T, --append-system-prompt T   the lead's instructions
      --allowedTools R   rules huddle honours in the mode (Read, Edit, Bash(git *)…)
      --disallowedTools R   deny rules for this run (Bash(rm:*), Read(./.env), mcp__s__t)
      --dangerously-skip-permissions   bypassPermissions; --max-budget-usd N: --budget-usd
      --settings FILE|JSON   Claude Code's settings for this run, over every file
      --setting-sources user,project,local   the settings files read (any subset)
      --mcp-config FILE|JSON…   MCP servers for this run; --strict-mcp-config: only those
      --fallback-model M   used once the model stays overloaded (529) after every retry
  --model takes opus, sonnet and haiku too. Refused with the reason: --add-dir, --tools
  -h, --help             this help
  -v, --version          the version

Settings files (lowest first; flags and variables win): ~/.claude/settings.json,
  ~/.config/huddle/settings.json, .mcp.json (MCP servers), .claude/settings.json,
  .team/settings.json (the team's), .claude/settings.local.json, .team/settings.local.json
  (yours); hooks, verify gates, roles, notifications: see docs/ in huddle's repository
  (docs/configuration.md), /config in the console

Environment:
  ANTHROPIC_API_KEY      the API key (or ANTHROPIC_AUTH_TOKEN for a bearer token)
  ANTHROPIC_BASE_URL     any server that speaks the Anthropic Messages API
  HUDDLE_MODEL           the default model
  HUDDLE_PERMISSION_MODE the default permission mode (plan, ask or auto)
  HUDDLE_TEAM_URL        as --team; HUDDLE_LEASE_MS: a host silent this long loses its teammates

Exit codes (headless): 0 done, 1 the run failed, 2 usage or configuration error, 3 a budget ran out.
status/send/interrupt/approve/approvals exit 2 when no huddle runs in the workspace.`;

/** Subcommands that talk to a live huddle or serve one: each has its own few options. */
const SUBCOMMANDS = ['status', 'send', 'interrupt', 'approve', 'approvals', 'workflow', 'mcp', 'trust', 'rewind', 'doctor', 'prune'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

async function runSubcommand(command: Subcommand, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        cwd: { type: 'string' },
        json: { type: 'boolean' },
        as: { type: 'string' },
        socket: { type: 'string' },
        team: { type: 'string' },
        list: { type: 'boolean' },
        revoke: { type: 'boolean' },
        deny: { type: 'boolean' },
        trust: { type: 'boolean' },
        files: { type: 'boolean' },
        all: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        checkpoints: { type: 'boolean' },
        'older-than': { type: 'string' },
        message: { type: 'string', short: 'm' },
        edit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    // Node's parser explains itself at length ("To specify a positional argument starting with a '-'…"): one line instead.
    const flag = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) usageError(`unknown option '${flag}' for huddle ${command} (huddle --help lists them)`);
    usageError((error as Error).message.split('. ')[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const allowed: Record<Subcommand, string[]> = {
    status: ['cwd', 'json'],
    send: ['cwd'],
    interrupt: ['cwd'],
    approve: ['cwd', 'deny', 'message', 'edit', 'list', 'json'],
    approvals: ['cwd', 'json'],
    workflow: ['cwd', 'team', 'trust'],
    mcp: ['cwd', 'as', 'socket', 'team'],
    trust: ['cwd', 'list', 'revoke'],
    rewind: ['cwd', 'files', 'all'],
    doctor: ['cwd', 'json'],
    prune: ['cwd', 'team', 'dry-run', 'older-than', 'checkpoints'],
  };
  for (const key of Object.keys(values)) if (!allowed[command].includes(key)) usageError(`--${key} does not go with huddle ${command}`);
  if (command === 'trust') {
    if (positionals.length) usageError(`unexpected argument '${positionals[0]}'`);
    if (values.list && values.revoke) usageError('--list and --revoke exclude each other');
    const { runTrustCommand } = await import('./faces/trust-cli.js');
    return runTrustCommand(values.list ? 'list' : values.revoke ? 'revoke' : 'trust', values.cwd);
  }
  if (command === 'doctor') {
    if (positionals.length) usageError(`unexpected argument '${positionals[0]}'`);
    const { runDoctorCommand } = await import('./faces/doctor-cli.js');
    return runDoctorCommand({ cwd: values.cwd, json: values.json ?? false });
  }
  if (command === 'prune') {
    if (values.checkpoints) {
      const teamFlag = (['team', 'older-than', 'cwd'] as const).find((key) => values[key] !== undefined);
      if (teamFlag) usageError(`--${teamFlag} does not go with --checkpoints: prune teams and checkpoints in separate runs`);
      if (positionals.length) usageError(`unexpected argument '${positionals[0]}': huddle prune --checkpoints takes no team names`);
      const { runPruneCheckpoints } = await import('./faces/prune-cli.js');
      return runPruneCheckpoints({ dryRun: values['dry-run'] ?? false });
    }
    const days = values['older-than'];
    if (days !== undefined && !/^\d+$/.test(days)) usageError(`--older-than takes a whole number of days, not '${days}'`);
    const { runPruneCommand } = await import('./faces/prune-cli.js');
    return runPruneCommand({
      cwd: values.cwd,
      team: values.team,
      dryRun: values['dry-run'] ?? false,
      ...(days !== undefined ? { olderThanDays: Number(days) } : {}),
      names: positionals,
    });
  }
  if (command === 'mcp') {
    if (!values.as) usageError('huddle mcp needs --as NAME: the teammate the external agent acts as');
    if (positionals.length) usageError(`unexpected argument '${positionals[0]}'`);
    const { runMcpServer } = await import('./faces/mcp-server.js');
    return runMcpServer({ as: values.as, cwd: values.cwd, socket: values.socket, team: values.team, version: VERSION });
  }
  if (command === 'rewind') {
    const [id, ...files] = positionals;
    if (files.length && !values.files) usageError(`unexpected argument '${files[0]}' (to restore only some files: huddle rewind ID --files PATH…)`);
    if (values.files && (!id || !files.length)) usageError('usage: huddle rewind ID --files PATH…');
    const { runRewind } = await import('./faces/rewind-cli.js');
    return runRewind({ cwd: values.cwd, id, files, all: values.all ?? false });
  }
  if (command === 'workflow') {
    const [verb, file, ...extra] = positionals;
    if (verb !== 'run' || !file) usageError('usage: huddle workflow run FILE');
    if (extra.length) usageError(`unexpected argument '${extra[0]}'`);
    const { runWorkflowCommand } = await import('./faces/workflow-cli.js');
    return runWorkflowCommand({ file, cwd: values.cwd, team: values.team, trust: values.trust ?? false });
  }
  const { runControlCommand } = await import('./faces/control-cli.js');
  if (command === 'status') {
    if (positionals.length) usageError(`unexpected argument '${positionals[0]}'`);
    return runControlCommand({ kind: 'status', json: values.json ?? false }, values.cwd);
  }
  if (command === 'approvals') {
    if (positionals.length) usageError(`unexpected argument '${positionals[0]}'`);
    return runControlCommand({ kind: 'approvals', json: values.json ?? false }, values.cwd);
  }
  if (command === 'approve' && values.list) {
    // `huddle approve --list` is `huddle approvals`, kept for the workflows' docs and muscle memory.
    if (positionals.length || values.deny || values.message !== undefined || values.edit !== undefined)
      usageError('--list takes no ID, --deny, --message or --edit');
    return runControlCommand({ kind: 'approvals', json: values.json ?? false }, values.cwd);
  }
  if (command === 'approve') {
    if (values.json) usageError('--json goes with huddle approvals (or approve --list)');
    if (positionals.length > 1) usageError(`unexpected argument '${positionals[1]}' (usage: huddle approve [ID] [--deny] [--message TEXT] [--edit FILE])`);
    return runControlCommand({ kind: 'approve', id: positionals[0], deny: values.deny ?? false, message: values.message, editFile: values.edit }, values.cwd);
  }
  if (command === 'send') {
    const [to, ...words] = positionals;
    if (!to || words.length === 0) usageError('usage: huddle send NAME TEXT');
    return runControlCommand({ kind: 'send', to, text: words.join(' ') }, values.cwd);
  }
  const [agent, ...extra] = positionals;
  if (!agent) usageError('usage: huddle interrupt NAME');
  if (extra.length) usageError(`unexpected argument '${extra[0]}'`);
  return runControlCommand({ kind: 'interrupt', agent }, values.cwd);
}

function usageError(message: string): never {
  process.stderr.write(`huddle: ${message}\nRun 'huddle --help' for usage.\n`);
  process.exit(2);
}

/** Flags with a value: the prompt for `-p` is never one of them (`-p --model x` reads stdin). */
function buildProgram(Command: typeof import('commander').Command): Command {
  const program = new Command('huddle')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .helpOption(false)
    .allowExcessArguments(true)
    .argument('[command...]')
    .option('-p, --print [prompt]')
    .option('--prompt-file <file>')
    .option('--output-format <format>')
    .option('--input-format <format>')
    .option('--include-partial-messages')
    .option('--verbose')
    .option('--json')
    .option('-r, --resume [session]')
    .option('-c, --continue')
    .option('--fresh')
    .option('--session-id <uuid>')
    .option('--fork-session')
    .option('--cwd <dir>')
    .option('--team <url>')
    .option('--slots <n>')
    .option('--model <id>')
    .option('--api-key-file <file>')
    .option('--max-turns <n>')
    .option('--budget-usd <n>')
    .option('--max-budget-usd <n>')
    .option('--budget-minutes <n>')
    .option('--budget-turns <n>')
    .option('--permission-mode <mode>')
    .option('--dangerously-skip-permissions')
    .option('--allow-dangerously-skip-permissions')
    .option('--permission-prompt-tool <tool>')
    .option('--system-prompt <text>')
    .option('--append-system-prompt <text>')
    .option('--allowedTools, --allowed-tools <rules...>')
    .option('--disallowedTools, --disallowed-tools <rules...>')
    .option('--setting-sources <sources>')
    .option('--settings <file-or-json>')
    .option('--mcp-config <configs...>')
    .option('--strict-mcp-config')
    .option('--fallback-model <model>')
    .option('--no-session-persistence')
    .option('--trust')
    .option('--backlog <source>')
    .option('--base <branch>')
    .option('--github-api-url <url>')
    .option('--pr-repo <repo>')
    .option('--verify <command>')
    .option('-h, --help')
    .option('-v, --version');
  for (const flag of Object.keys(REFUSED_FLAGS)) program.option(`--${flag} [value...]`);
  return program;
}

/** Commander's error, in huddle's one line. */
function commanderMessage(error: CommanderError): string {
  const text = error.message.replace(/^error: /, '');
  if (error.code === 'commander.unknownOption') {
    const flag = /'([^']+)'/.exec(text)?.[1] ?? text;
    return `unknown option '${flag}' (huddle --help lists them)`;
  }
  if (error.code === 'commander.optionMissingArgument') return text.replace(/^option '([^']+)' argument missing$/, '$1 needs a value');
  return text;
}

export type ParsedFlags = { opts: Record<string, string | string[] | boolean | undefined>; args: string[] };

/** The flags and arguments as commander reads them (loaded only when there are any). */
export async function readFlags(argv: string[]): Promise<ParsedFlags> {
  const { Command, CommanderError } = await import('commander');
  const program = buildProgram(Command);
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) usageError(commanderMessage(error));
    throw error;
  }
  return { opts: program.opts(), args: program.args };
}

async function parse(argv: string[]): Promise<CliOptions | 'help' | 'version'> {
  // `huddle` alone, the console's usual start, has nothing for a parser to read (docs/console.md#starting).
  return interpretFlags(argv.length ? (readPromptOnly(argv) ?? (await readFlags(argv))) : { opts: {}, args: [] });
}

/**
 * `huddle -p "PROMPT"`, a headless run's usual start, read without loading commander and building every
 * option of the program: what commander makes of it (test/scenarios/cli/no-flags.test.ts); any other shape is its.
 */
export function readPromptOnly(argv: string[]): ParsedFlags | undefined {
  const [flag, prompt] = argv;
  if (argv.length !== 2 || (flag !== '-p' && flag !== '--print') || prompt === undefined || prompt.startsWith('-')) return undefined;
  return { opts: { print: prompt }, args: [] };
}

/** The options the flags ask for, or a usage error (one line, exit 2). */
export function interpretFlags({ opts, args }: ParsedFlags): CliOptions | 'help' | 'version' {
  const str = (key: string): string | undefined => (typeof opts[key] === 'string' ? (opts[key] as string) : undefined);
  const list = (key: string): string[] | undefined => (Array.isArray(opts[key]) ? (opts[key] as string[]) : undefined);
  const flag = (key: string): boolean => opts[key] === true;
  if (flag('help')) return 'help';
  if (flag('version')) return 'version';
  // A flag of Claude Code's that huddle cannot honour: refused by name, with the reason.
  for (const [name, reason] of Object.entries(REFUSED_FLAGS)) {
    const key = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (opts[key] !== undefined) usageError(`--${name} is not supported: ${reason}`);
  }
  if (opts.sessionPersistence === false)
    usageError("--no-session-persistence is not supported: huddle keeps the team's state in .team/ (the team is the session; --fresh archives it)");
  const print = opts.print === true ? '-' : str('print');
  const values = {
    print,
    'prompt-file': str('promptFile'),
    'output-format': str('outputFormat'),
    json: flag('json'),
    resume: opts.resume !== undefined,
    continue: flag('continue'),
    fresh: flag('fresh'),
    cwd: str('cwd'),
    team: str('team'),
    slots: str('slots'),
    model: str('model'),
    'api-key-file': str('apiKeyFile'),
    'max-turns': str('maxTurns'),
    'budget-usd': str('budgetUsd') ?? str('maxBudgetUsd'),
    'budget-minutes': str('budgetMinutes'),
    'budget-turns': str('budgetTurns'),
    'permission-mode': str('permissionMode'),
    trust: flag('trust'),
  };
  const [command, ...extra] = args;
  if (command !== undefined && command !== 'demo' && command !== 'worker') usageError(`unknown command '${command}' (did you mean -p "${command}"?)`);
  if (extra.length) usageError(`unexpected argument '${extra[0]}'`);
  const inputFormat = str('inputFormat');
  if (inputFormat !== undefined && inputFormat !== 'text' && inputFormat !== 'stream-json')
    usageError(`--input-format takes text or stream-json, not '${inputFormat}'`);
  const streamInput = inputFormat === 'stream-json';
  if (values.print !== undefined && !values.print.trim()) usageError('-p needs a prompt');
  if (values.print !== undefined && values['prompt-file'] !== undefined && values.print !== '-') usageError('-p "PROMPT" and --prompt-file exclude each other');
  if (streamInput && ((values.print !== undefined && values.print !== '-') || values['prompt-file'] !== undefined))
    usageError('--input-format stream-json reads the prompts from stdin: it takes no -p "PROMPT" or --prompt-file');
  const headless = values.print !== undefined || values['prompt-file'] !== undefined || streamInput;
  if (values.json && !headless) usageError('--json goes with -p "PROMPT"');
  // The console works through a backlog (docs/backlog.md#in-the-console); headless, huddle run --backlog does.
  const backlogSource = str('backlog');
  if (backlogSource !== undefined && (headless || command !== undefined))
    usageError('--backlog goes with the console (huddle --backlog SOURCE), or huddle run --backlog SOURCE headless');
  for (const key of ['base', 'githubApiUrl', 'prRepo', 'verify'] as const) {
    if (str(key) !== undefined && backlogSource === undefined)
      usageError(`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} goes with --backlog SOURCE`);
  }
  const outputFormat = values['output-format'];
  if (outputFormat !== undefined && outputFormat !== 'text' && outputFormat !== 'json' && outputFormat !== 'stream-json') {
    usageError(`--output-format takes text, json or stream-json, not '${outputFormat}'`);
  }
  if (outputFormat !== undefined && !headless) usageError('--output-format goes with -p "PROMPT"');
  for (const [key, name] of [
    ['includePartialMessages', '--include-partial-messages'],
    ['sessionId', '--session-id'],
    ['forkSession', '--fork-session'],
  ] as const) {
    if (opts[key] !== undefined && !headless) usageError(`${name} goes with -p "PROMPT" (or --input-format stream-json)`);
  }
  if (streamInput && outputFormat !== 'stream-json') usageError('--input-format stream-json goes with --output-format stream-json');
  if (values.json && outputFormat !== undefined && outputFormat !== 'text')
    usageError(`--json and --output-format ${outputFormat} exclude each other: both write to stdout`);
  if ((values.resume || values.continue) && values.fresh) usageError(`--${values.resume ? 'resume' : 'continue'} and --fresh exclude each other`);
  const resumeId = typeof opts.resume === 'string' ? opts.resume : undefined;
  const sessionId = str('sessionId');
  for (const [name, id] of [
    ['--session-id', sessionId],
    ['--resume', resumeId],
  ] as const) {
    if (id !== undefined && !UUID.test(id))
      usageError(`${name} takes a session id (a UUID such as ${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}), not '${id}'`);
  }
  if (sessionId && (values.resume || values.continue) && !flag('forkSession'))
    usageError('--session-id with --resume or --continue needs --fork-session (the continued session keeps its own id)');
  if (flag('forkSession') && !values.resume && !values.continue) usageError('--fork-session goes with --resume or --continue');
  if (values.team !== undefined && !/^postgres(ql)?:\/\//i.test(values.team))
    usageError(`--team takes a postgres:// URL (postgres://USER@HOST:PORT/DATABASE?team=NAME), not '${redactUrl(values.team)}'`);
  let slots: number | undefined;
  if (values.slots !== undefined) {
    if (command !== 'worker') usageError('--slots goes with huddle worker');
    slots = Number(values.slots);
    if (!Number.isInteger(slots) || slots < 1 || slots > 64) usageError(`--slots takes a whole number from 1 to 64, not '${values.slots}'`);
  }
  if (command === 'worker' && headless) usageError('huddle worker takes no prompt: the lead hands its teammates their work');
  let maxTurns: number | undefined;
  if (values['max-turns'] !== undefined) {
    maxTurns = Number(values['max-turns']);
    if (!Number.isInteger(maxTurns) || maxTurns < 1) usageError(`--max-turns takes a whole number of at least 1, not '${values['max-turns']}'`);
  }
  const budget: NonNullable<CliOptions['budget']> = {};
  for (const kind of ['usd', 'minutes', 'turns'] as const) {
    const text = values[`budget-${kind}`];
    if (text === undefined) continue;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0 || (kind === 'turns' && !Number.isInteger(value))) {
      usageError(`--budget-${kind} takes a ${kind === 'turns' ? 'whole ' : ''}number above 0, not '${text}'`);
    }
    budget[kind] = value;
  }
  // Claude Code's modes are mapped onto huddle's plan/ask/auto (claude-flags.ts).
  const modeName = flag('dangerouslySkipPermissions') ? 'bypassPermissions' : values['permission-mode'];
  if (flag('dangerouslySkipPermissions') && values['permission-mode'] !== undefined && values['permission-mode'] !== 'bypassPermissions')
    usageError(`--dangerously-skip-permissions and --permission-mode ${values['permission-mode']} exclude each other`);
  const permissionMode = modeName === undefined ? undefined : mapPermissionMode(modeName);
  if (modeName !== undefined && !permissionMode)
    usageError(
      `--permission-mode takes plan, ask or auto, not '${modeName}' (Claude Code's default, acceptEdits, bypassPermissions and dontAsk are mapped onto them)`,
    );
  const promptTool = str('permissionPromptTool');
  if (promptTool !== undefined && (promptTool !== 'stdio' || !streamInput))
    usageError(
      `--permission-prompt-tool ${promptTool} is not supported: huddle puts its questions to the caller only as can_use_tool requests (--permission-prompt-tool stdio with --input-format stream-json)`,
    );
  const allowed = (list('allowedTools') ?? []).flatMap(parseToolRules);
  const allowedRefusal = allowedToolsRefusal(allowed, permissionMode ?? 'auto');
  if (allowedRefusal) usageError(allowedRefusal);
  const disallowed = (list('disallowedTools') ?? []).flatMap(parseToolRules);
  const disallowedRefusal = disallowedToolsRefusal(disallowed);
  if (disallowedRefusal) usageError(disallowedRefusal);
  const sourcesText = str('settingSources');
  const settingSources = sourcesText === undefined ? undefined : parseSettingSources(sourcesText);
  if (typeof settingSources === 'string') usageError(settingSources);
  const settingsText = str('settings');
  const settings = settingsText === undefined ? undefined : { label: '--settings', values: fileOrJson('--settings', settingsText) };
  const mcpConfig = list('mcpConfig')?.map((text) => {
    const value = fileOrJson('--mcp-config', text);
    const servers = (value as { mcpServers?: unknown } | undefined)?.mcpServers;
    if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
      usageError(`--mcp-config ${oneArg(text)}: expected {"mcpServers": {…}} (the .mcp.json format)`);
    return { label: '--mcp-config', servers: servers as Record<string, unknown> };
  });
  if (flag('strictMcpConfig') && !mcpConfig) usageError('--strict-mcp-config goes with --mcp-config (only its servers run)');
  const fallbackModel = str('fallbackModel');
  if (str('systemPrompt') !== undefined && str('appendSystemPrompt') !== undefined)
    usageError("--system-prompt and --append-system-prompt exclude each other: the first replaces the lead's instructions");
  const promptSource = streamInput
    ? 'stream'
    : values['prompt-file'] !== undefined
      ? 'file'
      : values.print === '-'
        ? 'stdin'
        : values.print !== undefined
          ? 'argument'
          : undefined;
  return {
    prompt: values.print,
    promptSource,
    promptFile: values['prompt-file'],
    outputFormat: outputFormat as OutputFormat | undefined,
    json: values.json ?? false,
    resume: (values.resume || values.continue) ?? false,
    fresh: values.fresh ?? false,
    cwd: values.cwd,
    model: values.model === undefined ? undefined : resolveModelAlias(values.model),
    apiKeyFile: values['api-key-file'],
    maxTurns,
    permissionMode,
    budget,
    command,
    team: values.team,
    slots,
    ...(values.trust ? { trust: true } : {}),
    ...(backlogSource !== undefined
      ? { backlog: { source: backlogSource, base: str('base'), githubApiUrl: str('githubApiUrl'), prRepo: str('prRepo'), verify: str('verify') } }
      : {}),
    ...(streamInput ? { inputFormat: 'stream-json' as const } : {}),
    ...(flag('includePartialMessages') ? { includePartialMessages: true } : {}),
    ...(sessionId ? { sessionId } : {}),
    ...(resumeId ? { resumeId } : {}),
    ...(flag('forkSession') ? { forkSession: true } : {}),
    ...(str('systemPrompt') ? { systemPrompt: str('systemPrompt') } : {}),
    ...(str('appendSystemPrompt') ? { appendSystemPrompt: str('appendSystemPrompt') } : {}),
    ...(promptTool === 'stdio' ? { permissionPromptTool: 'stdio' as const } : {}),
    ...(modeName !== undefined ? { permissionModeName: modeName } : {}),
    ...(allowedCommandPrefixes(allowed).length ? { allowedCommands: allowedCommandPrefixes(allowed) } : {}),
    ...(disallowed.length ? { disallowedTools: disallowed } : {}),
    ...(settings ? { settings } : {}),
    ...(settingSources ? { settingSources } : {}),
    ...(mcpConfig ? { mcpConfig } : {}),
    ...(flag('strictMcpConfig') ? { strictMcpConfig: true } : {}),
    ...(fallbackModel ? { fallbackModel: resolveModelAlias(fallbackModel) } : {}),
  };
}

/** A flag's value that is JSON (`{…}`) or the name of a JSON file, as Claude Code takes --settings and --mcp-config. */
function fileOrJson(flagName: string, text: string): unknown {
  const inline = text.trim().startsWith('{');
  let source = text;
  if (!inline) {
    try {
      source = readFileSync(text, 'utf8');
    } catch (error) {
      usageError(`${flagName} ${oneArg(text)}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  try {
    return JSON.parse(source);
  } catch (error) {
    usageError(`${flagName} ${inline ? '{…}' : oneArg(text)}: not valid JSON (${(error as Error).message})`);
  }
}

function oneArg(text: string): string {
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The prompt's text: the argument, stdin (all of it: a 1 MB prompt is fine), or a file. */
async function readPrompt(options: CliOptions): Promise<string> {
  let text: string;
  if (options.promptSource === 'stdin') {
    if (process.stdin.isTTY) usageError('-p without a prompt reads it from stdin, but stdin is a terminal: pass the prompt (-p "…") or pipe it in');
    try {
      // Read as a stream: a pipe may be non-blocking (readFileSync(0) then fails with EAGAIN).
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      text = Buffer.concat(chunks).toString('utf8');
    } catch (error) {
      usageError(`cannot read the prompt from stdin: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (!text.trim()) usageError('-p read an empty prompt from stdin');
    text = text.trimEnd();
  } else if (options.promptSource === 'file') {
    try {
      text = readFileSync(options.promptFile!, 'utf8');
    } catch (error) {
      usageError(
        `cannot read --prompt-file ${options.promptFile}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : ((error as NodeJS.ErrnoException).code ?? (error as Error).message)}`,
      );
    }
    if (!text.trim()) usageError(`--prompt-file ${options.promptFile} is empty`);
    text = text.trimEnd();
  } else {
    text = options.prompt ?? '';
  }
  return text;
}

/**
 * V8 lets the heap grow to up to four times what is live before a full collection (a choice made for a
 * browser tab's speed); huddle stays open for hours holding a team, so twice what is live is its bound:
 * eight streams in the console went from ~157 MB resident to ~118 MB (docs/console.md#memory). Set once
 * huddle has started, not before: a flag changed from its default changes V8's flag hash, and V8 then
 * rejects the code cache of every Node built-in loaded after it (node:http, zlib, crypto… compiled anew:
 * +7 % CPU on a ten-round headless run). V8 reads the flag whenever it sets the next limit; a run over
 * before then has little heap to bound.
 */
const HEAP_BOUND_AFTER_MS = 1_000;

function boundHeapGrowthLater(): void {
  setTimeout(() => {
    // The API's https (and tls under it) while its code cache still holds: a console's first request, typed
    // later, would otherwise compile them anew (~10–15 ms). A no-op where a request already loaded them.
    process.getBuiltinModule('node:https');
    process.getBuiltinModule('node:v8').setFlagsFromString('--heap-growing-percent=100');
  }, HEAP_BOUND_AFTER_MS).unref();
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  boundHeapGrowthLater();
  if (argv[0] === 'watch') {
    const { runWatchCommand } = await import('./faces/watch-cli.js');
    process.exit(await runWatchCommand(argv.slice(1)));
  }
  if (argv[0] === 'run' || argv[0] === 'merge') {
    const { runBacklogCommand, runMergeCommand } = await import('./faces/backlog-cli.js');
    process.exit(await (argv[0] === 'run' ? runBacklogCommand : runMergeCommand)(argv.slice(1)));
  }
  if (argv[0] === 'best-of' || argv[0] === 'pick') {
    const { runBestOfCommand, runPickCommand } = await import('./faces/best-of-cli.js');
    process.exit(await (argv[0] === 'best-of' ? runBestOfCommand : runPickCommand)(argv.slice(1)));
  }
  if ((SUBCOMMANDS as readonly string[]).includes(argv[0] ?? '')) process.exit(await runSubcommand(argv[0] as Subcommand, argv.slice(1)));
  const options = await parse(argv);
  if (options === 'help') {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (options === 'version') {
    const { sandboxStatus } = await import('./runtime/sandbox/status.js');
    process.stdout.write(`${VERSION}\n${sandboxStatus().line}\n`);
    return;
  }
  if (options.command === 'worker') {
    const { runWorker } = await import('./faces/worker.js');
    process.exit(await runWorker(options));
  }
  if (options.promptSource === 'stream') {
    const { runStreamInput } = await import('./faces/sdk-stdio.js');
    process.exit(await runStreamInput(options));
  }
  if (options.promptSource !== undefined) {
    options.prompt = await readPrompt(options);
    const { runHeadless } = await import('./headless.js');
    // Exit explicitly: idle keep-alive sockets or watchers must not hold a finished run open.
    process.exit(await runHeadless(options));
  }
  const { runConsole } = await import('./tui/run-console.js');
  process.exit(await runConsole(options));
}

/** Runs the command line; src/cli.ts calls it. */
export async function runCli(): Promise<void> {
  try {
    await main();
  } catch (error) {
    // The store failed under a running team (a full disk, a workspace gone read-only): one line, exit 1.
    const { StoreError } = await import('./runtime/store/store-errors.js');
    if (!(error instanceof StoreError)) throw error;
    process.stderr.write(`huddle: ${error.message}\n`);
    process.exit(1);
  }
}
