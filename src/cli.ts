#!/usr/bin/env node
// huddle's entry point. Kept tiny: `--version` and `--help` load nothing else, and each mode
// (headless, console) is imported only when it runs, from its own bundle chunk.
import module from 'node:module';
import { parseArgs } from 'node:util';
import type { CliOptions } from './session/cli-options.js';

declare const __HUDDLE_VERSION__: string;
const VERSION = typeof __HUDDLE_VERSION__ === 'string' ? __HUDDLE_VERSION__ : '0.0.0-dev';

// Reuse compiled code across runs (Node 22.1+): a measurable share of start-up.
module.enableCompileCache?.();

const HELP = `huddle ${VERSION}: a terminal team console for AI coding agents

Usage:
  huddle [--cwd DIR]                    open the console in a workspace (default: current directory)
  huddle -p "PROMPT" [--json]           run the team headless; print the lead's final text
  huddle demo                           the console driven by a built-in scripted model (no key needed)
  huddle status [--json]                the agents of the huddle running in the workspace, with statuses
  huddle send NAME TEXT                 a message to agent NAME of that huddle (delivered once, from "user")
  huddle interrupt NAME                 interrupt agent NAME's turn in that huddle
  huddle mcp --as NAME                  huddle's MCP server (stdio) for an external agent that is teammate NAME

Options:
  -p, --print PROMPT     headless: run PROMPT, print the lead's final text, exit
      --json             headless: stream every event as one JSON object per line
      --resume           continue the team left in the workspace
      --fresh            start a new team; the old state is archived under .team/archive/
      --cwd DIR          the workspace (default: current directory)
      --model ID         the model (default: $HUDDLE_MODEL or claude-sonnet-4-6)
      --api-key-file F   read the API key from a file instead of $ANTHROPIC_API_KEY
      --max-turns N      model calls one agent may make in one turn (default 50)
      --budget-usd N     team budget in dollars; --budget-minutes N (wall time) and
      --budget-turns N   (model calls) likewise. At 80 % a warning; at the limit each agent
                         pauses before its next model call (console: Ctrl+Y, y extends, n
                         stops it; headless: the run stops with exit code 3). Per-agent limits:
                         .team/budget.json or /budget in the console
      --permission-mode M
                         plan (read only), ask (commands off the allow-list wait for you;
                         the console's default) or auto (no questions; the headless default).
                         Destructive commands (rm -rf /, sudo, git push --force…) are
                         refused in every mode
  -h, --help             this help
  -v, --version          the version

Environment:
  ANTHROPIC_API_KEY      the API key (or ANTHROPIC_AUTH_TOKEN for a bearer token)
  ANTHROPIC_BASE_URL     any server that speaks the Anthropic Messages API
  HUDDLE_MODEL           the default model
  HUDDLE_PERMISSION_MODE the default permission mode (plan, ask or auto)

Exit codes (headless): 0 done, 1 the run failed, 2 usage or configuration error, 3 a budget ran out.
status/send/interrupt exit 2 when no huddle runs in the workspace.`;

/** Subcommands that talk to a live huddle or serve one: each has its own few options. */
const SUBCOMMANDS = ['status', 'send', 'interrupt', 'mcp'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

async function runSubcommand(command: Subcommand, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { cwd: { type: 'string' }, json: { type: 'boolean' }, as: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    usageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const allowed: Record<Subcommand, string[]> = { status: ['cwd', 'json'], send: ['cwd'], interrupt: ['cwd'], mcp: ['cwd', 'as'] };
  for (const key of Object.keys(values)) if (!allowed[command].includes(key)) usageError(`--${key} does not go with huddle ${command}`);
  if (command === 'mcp') {
    if (!values.as) usageError('huddle mcp needs --as NAME: the teammate the external agent acts as');
    if (positionals.length) usageError(`unexpected argument '${positionals[0]}'`);
    const { runMcpServer } = await import('./faces/mcp-server.js');
    return runMcpServer({ as: values.as, cwd: values.cwd, version: VERSION });
  }
  const { runControlCommand } = await import('./faces/control-cli.js');
  if (command === 'status') {
    if (positionals.length) usageError(`unexpected argument '${positionals[0]}'`);
    return runControlCommand({ kind: 'status', json: values.json ?? false }, values.cwd);
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

function parse(argv: string[]): CliOptions | 'help' | 'version' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        print: { type: 'string', short: 'p' },
        json: { type: 'boolean' },
        resume: { type: 'boolean' },
        fresh: { type: 'boolean' },
        cwd: { type: 'string' },
        model: { type: 'string' },
        'api-key-file': { type: 'string' },
        'max-turns': { type: 'string' },
        'budget-usd': { type: 'string' },
        'budget-minutes': { type: 'string' },
        'budget-turns': { type: 'string' },
        'permission-mode': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    usageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (values.version) return 'version';
  const [command, ...extra] = positionals;
  if (command !== undefined && command !== 'demo') usageError(`unknown command '${command}' (did you mean -p "${command}"?)`);
  if (extra.length) usageError(`unexpected argument '${extra[0]}'`);
  if (values.print !== undefined && !values.print.trim()) usageError('-p needs a prompt');
  if (values.json && values.print === undefined) usageError('--json goes with -p "PROMPT"');
  if (values.resume && values.fresh) usageError('--resume and --fresh exclude each other');
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
  // Checked here (not by importing the policy) to keep --help and --version light.
  const permissionMode = values['permission-mode'];
  if (permissionMode !== undefined && permissionMode !== 'plan' && permissionMode !== 'ask' && permissionMode !== 'auto') {
    usageError(`--permission-mode takes plan, ask or auto, not '${permissionMode}'`);
  }
  return {
    prompt: values.print,
    json: values.json ?? false,
    resume: values.resume ?? false,
    fresh: values.fresh ?? false,
    cwd: values.cwd,
    model: values.model,
    apiKeyFile: values['api-key-file'],
    maxTurns,
    permissionMode,
    budget,
    command,
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if ((SUBCOMMANDS as readonly string[]).includes(argv[0] ?? '')) process.exit(await runSubcommand(argv[0] as Subcommand, argv.slice(1)));
  const options = parse(argv);
  if (options === 'help') {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (options === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  if (options.prompt !== undefined) {
    const { runHeadless } = await import('./headless.js');
    // Exit explicitly: idle keep-alive sockets or watchers must not hold a finished run open.
    process.exit(await runHeadless(options));
  }
  const { runConsole } = await import('./tui/run-console.js');
  process.exit(await runConsole(options));
}

await main();
