// What a shell command may do under a permission mode. Every simple command the line would run
// (found by shell-syntax.ts, through quotes, wrappers like env/xargs/timeout, `bash -c`, eval,
// substitutions and pipes into shells) is checked against:
//   1. the deny-list: destructive commands, refused in EVERY mode, with the rule that matched;
//   2. plan mode: only commands that read;
//   3. ask mode: commands that read, or match the allow-list, run; others need the person's approval,
//      and so do redirections that write outside the workspace or into a protected path.
// auto mode runs everything the deny-list lets through. The deny-list is a guard against accidents
// and obvious tricks, not a sandbox: code run by a script or an interpreter is not inspected; the
// OS sandbox (../sandbox) is the wall, this is the first, explainable layer.
//
// Over 500 lines on purpose: the Walker is one recursive reading of a command line whose parts call
// each other (a wrapper's command, `bash -c`, a git alias, a function body with its arguments, find's
// -exec are walked again through the same checks). Its tables (policy-tables.ts), word helpers
// (policy-helpers.ts) and the judgement of critical paths (critical-paths.ts) live beside it.
import os from 'node:os';
import path from 'node:path';
import type { PermissionMode } from './permission-mode.js';
import { secretLocation } from '../sandbox/hidden-paths.js';
import { GIT_DIR_VAR, parseShell, staticOutput, type Redirect, type Script, type SimpleCommand, type Word } from './shell-syntax.js';
import {
  DISK_TOOLS,
  DOWNLOADERS,
  FIND_ACTIONS,
  FIND_DELETERS,
  FIND_NON_TESTS,
  GIT_COMMAND_SETTINGS,
  HARMLESS_DEVICES,
  INTERPRETERS,
  POWER,
  POWER_VERBS,
  PRIVILEGE,
  PROGRAM_VARIABLES,
  SHELLS,
  WRAPPERS,
  WRITE_REDIRECTS,
} from './policy-tables.js';
import {
  approvalPrefix,
  basename,
  commandProgram,
  downloaderIn,
  gitParts,
  gitReadOnlyReason,
  isDevice,
  killsEverything,
  literalWord,
  matchesPrefix,
  oneLine,
  readOnlyReason,
  readsCodeFromStdin,
  splitOptions,
  stripPrefixWords,
  unwrap,
  type Invocation,
} from './policy-helpers.js';

import { CriticalPaths } from './critical-paths.js';

export { approvalPrefix, matchesPrefix } from './policy-helpers.js';

export interface PolicyOptions {
  mode: PermissionMode;
  /** The directory the agent works in (the workspace, or its own worktree). */
  root: string;
  /** The root is the agent's own git worktree: discarding changes there loses nobody else's work. */
  ownWorktree?: boolean;
  /** The team's workspace (the main checkout), when the root is a teammate's own checkout. */
  teamRoot?: string;
  /** Command prefixes allowed without asking, beyond DEFAULT_ALLOW (settings' permissions.allow, and the old .team/allow.json). */
  allow?: readonly string[];
  /** The home directory (tests pass one). */
  home?: string;
}

export type CommandVerdict =
  | { kind: 'allow' }
  /** On the deny-list: refused in every mode. */
  | { kind: 'deny'; rule: string; reason: string; command: string }
  /** Plan mode: the command does more than read. */
  | { kind: 'plan'; reason: string; command: string }
  /** Ask mode: needs the person's approval. `prefixes` are what "approve always" would allow-list. */
  | { kind: 'ask'; reason: string; commands: string[]; prefixes: string[] };

/** Allowed in ask mode without a question (commands that only read are allowed as well). */
export const DEFAULT_ALLOW: readonly string[] = [
  'git status',
  'git diff',
  'git log',
  'git show',
  'git rev-parse',
  'git ls-files',
  'git blame',
  'git branch --show-current',
  'npm test',
  'npm run test',
  'npm run build',
  'npm run lint',
  'npm run typecheck',
  'npm --version',
  'npx tsc',
  'npx vitest',
  'node --version',
  'tsc --noEmit',
];

/** Paths (relative to the root) whose writes need approval in ask mode, and why. */
export function protectedPathReason(relative: string): string | undefined {
  const parts = relative.split(/[\\/]+/).filter((p) => p && p !== '.');
  const base = parts.at(-1) ?? '';
  if (parts.includes('.git')) return 'it is inside .git (the repository itself)';
  if (parts[0] === '.team') return "it is huddle's team state (.team/), which includes the allow-list";
  if (parts[0] === '.tasks') return "it is huddle's task board (.tasks/); use the task tools";
  if (/^\.env(\..*)?$/.test(base)) return 'it may hold secrets (.env)';
  if (['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lockb'].includes(base)) {
    return 'it is a lockfile; let the package manager change it';
  }
  if (parts[0] === '.github' && parts[1] === 'workflows') return "CI workflows run with the repository's secrets";
  if (parts.includes('node_modules')) return 'it is an installed package (node_modules); change dependencies through the package manager';
  return undefined;
}

export function checkCommand(command: string, options: PolicyOptions): CommandVerdict {
  const walker = new Walker({ ...options, home: options.home ?? os.homedir(), allow: [...DEFAULT_ALLOW, ...(options.allow ?? [])] });
  const vars = new Map([
    ['HOME', options.home ?? os.homedir()],
    ['PWD', options.root],
    // A teammate's checkout keeps its git dir beside it (worktree.ts).
    [GIT_DIR_VAR, options.ownWorktree ? `${options.root}.git` : `${options.root}/.git`],
  ]);
  walker.vars = vars;
  walker.script(parseShell(command, vars), 0);
  return walker.verdict();
}

/** Why a command does more than read (plan mode), or undefined when it only reads. */
export function readOnlyViolation(command: string, root = process.cwd()): string | undefined {
  const verdict = checkCommand(command, { mode: 'plan', root });
  return verdict.kind === 'plan' ? verdict.reason : verdict.kind === 'deny' ? `${verdict.reason} (deny-list rule ${verdict.rule})` : undefined;
}

/** The text a refused tool call gives the model. */
export function denyMessage(verdict: Extract<CommandVerdict, { kind: 'deny' }>): string {
  return (
    `refused by huddle's deny-list (rule ${verdict.rule}): ${verdict.reason}` +
    `${verdict.command ? ` — in: ${verdict.command}` : ''}. ` +
    'This holds in every permission mode; do it another way, or ask the person to run it themselves.'
  );
}

// ---- the walk -----------------------------------------------------------------------------------

type Stdin = { kind: 'none' } | { kind: 'static'; text: string } | { kind: 'download'; by: string } | { kind: 'unknown' };

interface Finding {
  kind: 'deny' | 'plan' | 'ask';
  rule?: string;
  reason: string;
  command: string;
  prefix?: string;
}

const MAX_DEPTH = 12;

class Walker {
  readonly #options: Required<Omit<PolicyOptions, 'ownWorktree' | 'teamRoot'>> & { ownWorktree: boolean; teamRoot: string | undefined };
  readonly #findings: Finding[] = [];
  /** Where relative paths point: the root, until a `cd`; undefined once a `cd` went somewhere unknown. */
  #cwd: string | undefined;
  /** What a path names that must not be deleted or moved away (critical-paths.ts). */
  readonly #paths: CriticalPaths;
  /** Known shell variables (HOME, PWD), for parsing function bodies and aliases. */
  vars = new Map<string, string>();
  /** Functions the line defined, checked again at each call with the call's arguments. */
  readonly #functions = new Map<string, string>();
  /** `$1 $2 …` as far as known: set by `set -- …`, or a function call's arguments. */
  #positional: Word[] | undefined;
  /** git aliases the line configures (`git config alias.x '…'`). */
  readonly #gitAliases = new Map<string, string>();
  /** Assignments in front of the command being checked (`GIT_DIR=… git …`). */
  #assignments: Array<{ name: string; value: string; dynamic: boolean }> = [];

  constructor(options: PolicyOptions & { home: string; allow: string[] }) {
    this.#options = { ...options, ownWorktree: options.ownWorktree ?? false, teamRoot: options.teamRoot };
    this.#cwd = options.root;
    this.#paths = new CriticalPaths(this.#options, (word, text) => this.#resolve(word, text));
  }

  verdict(): CommandVerdict {
    const deny = this.#findings.find((f) => f.kind === 'deny');
    if (deny) return { kind: 'deny', rule: deny.rule!, reason: deny.reason, command: deny.command };
    const plan = this.#findings.find((f) => f.kind === 'plan');
    if (plan) return { kind: 'plan', reason: plan.reason, command: plan.command };
    const asks = this.#findings.filter((f) => f.kind === 'ask');
    if (asks.length) {
      return {
        kind: 'ask',
        reason: [...new Set(asks.map((f) => f.reason))].join('; '),
        commands: [...new Set(asks.map((f) => f.command))],
        prefixes: [...new Set(asks.flatMap((f) => (f.prefix ? [f.prefix] : [])))],
      };
    }
    return { kind: 'allow' };
  }

  /** The words with `"$@"`, `$*`, `$1`… replaced by the known positional parameters; undefined when none was there. */
  #expandPositional(words: Word[]): Word[] | undefined {
    const positional = this.#positional;
    if (!positional) return undefined;
    let changed = false;
    const out: Word[] = [];
    for (const word of words) {
      const ref = /^"?\$(?:\{)?([@*]|[1-9])\}?"?$/.exec(word.raw);
      if (!word.dynamic || !ref) {
        out.push(word);
        continue;
      }
      changed = true;
      if (ref[1] === '@' || ref[1] === '*') out.push(...positional);
      else if (positional[Number(ref[1]) - 1]) out.push(positional[Number(ref[1]) - 1]!);
    }
    return changed ? out : undefined;
  }

  #deny(rule: string, reason: string, command: string): void {
    this.#findings.push({ kind: 'deny', rule, reason, command });
  }

  /** Not read-only: refused in plan mode, a question in ask mode (unless allow-listed). */
  #notReadOnly(reason: string, command: string, prefix?: string, allowListed = false): void {
    if (this.#options.mode === 'plan') this.#findings.push({ kind: 'plan', reason, command });
    else if (this.#options.mode === 'ask' && !allowListed) {
      this.#findings.push({ kind: 'ask', reason, command, ...(prefix ? { prefix } : {}) });
    }
  }

  script(script: Script, depth: number, stdin: Stdin = { kind: 'none' }): void {
    if (depth > MAX_DEPTH) {
      this.#deny('too-deep', `commands nest more than ${MAX_DEPTH} levels deep, too deep to check`, '');
      return;
    }
    for (const problem of script.problems) {
      if (problem.startsWith('substitutions nest')) this.#deny('too-deep', `${problem}, too deep to check`, '');
      else this.#notReadOnly(`the command cannot be read safely: ${problem}`, '');
    }
    for (const [name, body] of script.functions) this.#functions.set(name, body);
    for (const name of script.forkBombs) {
      this.#deny('fork-bomb', `the function '${name}' calls itself in a pipe or the background and would multiply without end`, `${name}() { … }`);
    }
    for (const pipeline of script.pipelines) {
      let downloadedBy: string | undefined;
      let previous: SimpleCommand | undefined;
      pipeline.commands.forEach((command, index) => {
        let input: Stdin = index === 0 ? stdin : { kind: 'unknown' };
        if (downloadedBy) input = { kind: 'download', by: downloadedBy };
        else if (previous) {
          const output = staticOutput(previous);
          if (output !== undefined) input = { kind: 'static', text: output };
        }
        this.#command(command, input, depth);
        const program = commandProgram(command);
        if (program && DOWNLOADERS.has(program)) downloadedBy ??= program;
        previous = command;
      });
    }
  }

  #command(command: SimpleCommand, stdin: Stdin, depth: number): void {
    for (const word of command.words) for (const sub of word.subs) this.script(sub, depth + 1);
    for (const redirect of command.redirects) {
      for (const sub of redirect.target?.subs ?? []) this.script(sub, depth + 1);
      for (const sub of redirect.heredoc?.subs ?? []) this.script(sub, depth + 1);
    }
    // Input redirections replace what the pipe gives.
    for (const redirect of command.redirects) {
      if (redirect.heredoc) stdin = redirect.heredoc.subs.length ? { kind: 'unknown' } : { kind: 'static', text: redirect.heredoc.body };
      else if (redirect.op === '<<<' && redirect.target)
        stdin = redirect.target.dynamic ? { kind: 'unknown' } : { kind: 'static', text: `${redirect.target.text}\n` };
      else if (redirect.op === '<' || redirect.op === '<>') stdin = { kind: 'unknown' };
    }
    for (const redirect of command.redirects) this.#redirect(redirect, command.display);

    let words = stripPrefixWords(command.words);
    // `function NAME { …`: the name is defined here, not run.
    if (command.words[0]?.text === 'function' && !command.words[0].quoted) words = words.slice(1);
    this.#assignments = command.words.filter((w) => w.assignment).map((w) => w.assignment!);
    for (const assignment of this.#assignments) {
      if (PROGRAM_VARIABLES.test(assignment.name) && words.length > 0) {
        this.#notReadOnly(`'${assignment.name}=…' makes the command run another program`, command.display);
      }
    }
    if (words.length === 0) return;
    this.#invocation(words, command.display, stdin, depth);
  }

  #redirect(redirect: Redirect, display: string): void {
    if (!WRITE_REDIRECTS.has(redirect.op) || !redirect.target) return;
    const target = redirect.target;
    if ((redirect.op === '>&' || redirect.op === '<>') && /^(\d+|-)$/.test(target.text)) return; // 2>&1, >&-
    const where = this.#resolve(target);
    if (where?.startsWith('/dev/')) {
      if (HARMLESS_DEVICES.test(where)) return;
      this.#deny('device-write', `writes straight to the device ${where}`, display);
      return;
    }
    if (target.dynamic) {
      this.#notReadOnly(`the redirection '${redirect.op} ${target.raw}' writes to a path known only at run time`, display);
      return;
    }
    if (this.#options.mode === 'plan') {
      this.#notReadOnly(`redirection writes a file ('${redirect.op} ${target.raw}')`, display);
      return;
    }
    if (where === undefined) {
      this.#notReadOnly(`'${redirect.op} ${target.raw}' may write outside the workspace (where it points is only known when it runs)`, display);
      return;
    }
    const relative = path.relative(this.#options.root, where);
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      this.#notReadOnly(`'${redirect.op} ${target.raw}' writes outside the workspace`, display);
      return;
    }
    const guarded = protectedPathReason(relative);
    if (guarded) this.#notReadOnly(`'${redirect.op} ${target.raw}' writes to ${relative}: ${guarded}`, display);
  }

  /** `outer`: the words of the wrappers around this command (`timeout 5 npm test`), for the allow-list. */
  #invocation(words: Word[], display: string, stdin: Stdin, depth: number, outer: string[][] = []): void {
    if (depth > MAX_DEPTH) return this.#deny('too-deep', `commands nest more than ${MAX_DEPTH} levels deep, too deep to check`, display);
    // `"$@"`, `$1`… with known positional parameters: what they stand for.
    const expanded = this.#expandPositional(words);
    if (expanded) return this.#invocation(expanded, display, stdin, depth + 1, outer);
    const [head, ...args] = words;
    if (!head) return;
    // Without arguments a call checks nothing new (the body was checked where it was defined),
    // and `f() {` reads as such a call.
    const called = !head.dynamic && args.length ? this.#functions.get(head.text) : undefined;
    if (called !== undefined) {
      // The body runs with the call's arguments as $1…; checked as if written out.
      const saved = this.#positional;
      this.#positional = args;
      try {
        this.script(parseShell(called, this.vars), depth + 1, stdin);
      } finally {
        this.#positional = saved;
      }
      return;
    }
    if (!head.dynamic && head.text === 'set' && args.length && !args[0]!.text.startsWith('-') && !args[0]!.text.startsWith('+')) this.#positional = args;
    if (!head.dynamic && head.text === 'set' && args[0]?.text === '--') this.#positional = args.slice(1);
    if (!head.dynamic && head.text === 'alias') {
      for (const arg of args) {
        const eq = arg.text.indexOf('=');
        if (eq > 0) this.script(parseShell(arg.text.slice(eq + 1), this.vars), depth + 1);
      }
    }
    if (head.dynamic) {
      const danger = args.map((a) => this.#paths.critical(a)).find(Boolean);
      if (danger) this.#deny('dynamic-program', `the program is known only at run time (${head.raw}) and is given ${danger}`, display);
      else this.#notReadOnly(`the program is known only at run time (${head.raw})`, display);
      return;
    }
    const program = basename(head.text);
    const inv: Invocation = { program, args, display };
    const texts = args.map((a) => a.text);
    if (program === 'cd' || program === 'pushd' || program === 'popd') {
      const target = args.find((a) => !a.text.startsWith('-'));
      this.#cwd = program === 'popd' ? undefined : target ? this.#resolve(target) : this.#options.home;
    }

    // -- the deny-list ------------------------------------------------------------------------
    if (PRIVILEGE.has(program)) return this.#deny('privilege', `'${program}' runs commands as another user (privilege escalation)`, display);
    if (POWER.has(program)) return this.#deny('power', `'${program}' shuts down or restarts the machine`, display);
    if ((program === 'init' || program === 'telinit') && texts.some((t) => /^[06sS]$/.test(t))) {
      return this.#deny('power', `'${program} ${texts.join(' ')}' changes the machine's run level`, display);
    }
    if ((program === 'systemctl' || program === 'loginctl') && texts.some((t) => POWER_VERBS.has(t))) {
      return this.#deny('power', `'${program} ${texts.find((t) => POWER_VERBS.has(t))}' shuts down, suspends or restarts the machine`, display);
    }
    if (DISK_TOOLS.test(program)) return this.#deny('disk-format', `'${program}' formats, wipes or repartitions disks`, display);
    if (program === 'killall5') return this.#deny('kill-all', "'killall5' signals every process", display);
    if (program === 'kill' && killsEverything(texts)) return this.#deny('kill-all', "'kill -1' signals every process you own, huddle included", display);

    if (program === 'rm' || program === 'rimraf') {
      if (texts.includes('--no-preserve-root')) return this.#deny('rm-root', "'--no-preserve-root' lets rm delete /", display);
      const { flags, operands } = splitOptions(args);
      const recursive = program === 'rimraf' || flags.some((f) => f === '--recursive' || /^-[a-zA-Z]*[rR]/.test(f));
      if (recursive) {
        for (const operand of operands) {
          const what = this.#paths.critical(operand);
          if (what) return this.#deny('rm-recursive', `recursive delete of ${what}`, display);
        }
      }
    }
    if (program === 'mv') {
      const { operands } = splitOptions(args);
      for (const operand of operands.slice(0, -1)) {
        const what = this.#paths.critical(operand, 'state');
        if (what) return this.#deny('mv-critical', `moves away ${what}`, display);
      }
    }
    if (program === 'chmod' || program === 'chown' || program === 'chgrp') {
      const { flags, operands } = splitOptions(args);
      const recursive = flags.some((f) => f === '--recursive' || /^-[a-zA-Z]*R/.test(f));
      for (const operand of operands) {
        const what = this.#paths.critical(operand, recursive ? 'state' : 'none');
        if (what && (recursive || this.#resolve(operand) === '/')) {
          return this.#deny('chmod-recursive', `'${program}${recursive ? ' -R' : ''}' on ${what}`, display);
        }
      }
    }
    if (program === 'rsync' && texts.some((t) => /^--(delete|del$|remove-source-files)/.test(t))) {
      const { operands } = splitOptions(args.filter((a) => !/^--(exclude|include|filter|rsh|rsync-path|chmod|chown)=/.test(a.text)));
      const destination = operands.at(-1);
      const what = destination && !/^[^/]*:/.test(destination.text) ? this.#paths.critical(destination, 'all') : undefined;
      if (what) return this.#deny('rsync-delete', `'rsync --delete' into ${what} deletes what the source lacks`, display);
      for (const source of texts.includes('--remove-source-files') ? operands.slice(0, -1) : []) {
        const gone = this.#paths.critical(source, 'all');
        if (gone) return this.#deny('rsync-delete', `'rsync --remove-source-files' removes ${gone}`, display);
      }
    }
    if (program === 'dd') {
      const out = texts.find((t) => t.startsWith('of='))?.slice(3);
      if (out && isDevice(out)) return this.#deny('device-write', `dd writes straight to the device ${out}`, display);
    }
    if (['tee', 'cp', 'install', 'shred', 'truncate'].includes(program)) {
      // cp and install write their last operand; the others every operand.
      const target = program === 'cp' || program === 'install' ? texts.filter((t) => !t.startsWith('-')).at(-1) : texts.find((t) => isDevice(t));
      if (target && isDevice(target)) return this.#deny('device-write', `'${program}' writes to the device ${target}`, display);
    }
    // Downloading is fine; running what was downloaded is not.
    if ((SHELLS.has(program) || INTERPRETERS.has(program)) && stdin.kind === 'download' && readsCodeFromStdin(program, texts)) {
      return this.#deny('pipe-to-shell', `runs code downloaded by ${stdin.by} with ${program}, unseen`, display);
    }

    // -- commands that run other commands ----------------------------------------------------
    if (program === 'git') return this.#git(inv, depth, outer);
    if (program === 'find') return this.#find(inv, stdin, depth);
    if (SHELLS.has(program)) return this.#shell(inv, stdin, depth);
    if (program === 'eval') {
      const downloaded = args.map((a) => a.subs.map(downloaderIn).find(Boolean)).find(Boolean);
      if (downloaded) return this.#deny('pipe-to-shell', `eval runs code downloaded by ${downloaded}`, display);
      if (args.some((a) => a.dynamic)) this.#notReadOnly('eval runs a command known only at run time', display);
      return this.script(parseShell(texts.join(' ')), depth + 1, stdin);
    }
    if (program === 'trap' && args[0] && !args[0].text.startsWith('-')) return this.script(parseShell(args[0].text), depth + 1);
    if (program === 'source' || program === '.') {
      const file = args[0];
      const downloaded = file?.subs.map(downloaderIn).find(Boolean) ?? (file?.text === '/dev/stdin' && stdin.kind === 'download' ? stdin.by : undefined);
      if (downloaded) return this.#deny('pipe-to-shell', `'${program}' runs code downloaded by ${downloaded}`, display);
      const words = [program, file?.text ?? ''];
      const listed = file !== undefined && this.#options.allow.some((entry) => matchesPrefix(entry, words));
      return this.#notReadOnly(`'${program}' runs a script file`, display, file ? approvalPrefix(words) : undefined, listed);
    }
    const wrapper = WRAPPERS[program];
    const around = [...outer, words.map((w) => w.text)];
    if (wrapper) {
      const inner = unwrap(program, args, wrapper.valued);
      if (inner === undefined) return this.#modeCheck(inv, outer); // only options: e.g. `env` prints the environment
      if (program === 'watch') return this.script(parseShell(inner.map((w) => w.text).join(' ')), depth + 1);
      if (program === 'xargs') {
        const runner = basename(inner[0]?.text ?? '');
        if (stdin.kind === 'download' && (SHELLS.has(runner) || INTERPRETERS.has(runner) || runner === 'eval' || runner === 'sh')) {
          return this.#deny('pipe-to-shell', `'xargs ${runner}' runs code downloaded by ${stdin.by}`, display);
        }
        // The items come from stdin; when that is plain text, they are the last arguments.
        const items =
          stdin.kind === 'static'
            ? stdin.text
                .split(/\s+/)
                .filter(Boolean)
                .map((t) => literalWord(t))
            : [];
        return this.#invocation([...inner, ...items], display, { kind: 'unknown' }, depth + 1, around);
      }
      if (program === 'command' && texts.some((t) => t === '-v' || t === '-V')) return; // only looks a name up
      return this.#invocation(inner, display, stdin, depth + 1, around);
    }
    if ((program === 'npm' || program === 'pnpm' || program === 'yarn') && texts[0] === 'exec') {
      const inner = unwrap('npx', args.slice(1), WRAPPERS.npx!.valued);
      if (inner) return this.#invocation(inner, display, stdin, depth + 1, around);
    }
    this.#modeCheck(inv, outer);
  }

  /** Plan and ask mode for a command that runs no other command. */
  #modeCheck(inv: Invocation, outer: string[][] = []): void {
    // Auto mode neither asks nor refuses for what a command reads: the checks below only feed #notReadOnly.
    if (this.#options.mode === 'auto') return;
    // What plan mode may read is what the sandbox shows: not where credentials live.
    for (const arg of inv.args) {
      const where = this.#resolve(arg);
      const secret = where && secretLocation(where, this.#options.home);
      if (secret) this.#notReadOnly(`it reads ${secret}, where credentials live (hidden from commands)`, inv.display);
    }
    this.#readOnlyOrListed(inv, outer, [inv.program, ...inv.args.map((a) => a.text)], readOnlyReason(inv));
  }

  /** `why`: why the command is not read-only (undefined: it is). */
  #readOnlyOrListed(inv: Invocation, outer: string[][], words: string[], why: string | undefined): void {
    if (this.#options.mode === 'auto' || why === undefined) return;
    // `npx vitest run` is allowed by an entry `npx vitest`, `timeout 60 npm test` by `npm test`.
    const listed = [words, ...outer].some((candidate) => this.#options.allow.some((entry) => matchesPrefix(entry, candidate)));
    const runner = outer.at(-1);
    const prefixWords = runner && /^(npx|pnpx|bunx|npm|pnpm|yarn)$/.test(basename(runner[0] ?? '')) ? runner : words;
    this.#notReadOnly(
      this.#options.mode === 'ask' ? `'${oneLine(inv.display)}' is not on the allow-list` : why,
      inv.display,
      approvalPrefix(prefixWords),
      listed,
    );
  }

  #git(inv: Invocation, depth: number, outer: string[][]): void {
    const { sub, subArgs, config, globals } = gitParts(inv.args);
    const texts = subArgs.map((a) => a.text);
    // An alias saved earlier in the line (`git config alias.nuke 'push --force' && git nuke`).
    const saved = sub ? this.#gitAliases.get(sub) : undefined;
    if (saved !== undefined && !config.has(`alias.${sub}`)) config.set(`alias.${sub}`, saved);
    if (sub === 'config') {
      // Saving a setting that runs a command, or an alias, is checked as that command.
      const operands = texts.filter((t) => !t.startsWith('-'));
      const [key = '', value] = operands;
      if (value !== undefined && /^alias\./i.test(key)) {
        this.#gitAliases.set(key.slice(6), value);
        if (value.startsWith('!')) this.script(parseShell(value.slice(1), this.vars), depth + 1);
        else this.#git({ ...inv, args: [...value.split(/\s+/).filter(Boolean).map(literalWord)] }, depth + 1, outer);
      }
      if (value !== undefined && GIT_COMMAND_SETTINGS.test(key)) this.script(parseShell(value.replace(/^!/, ''), this.vars), depth + 1);
    }
    for (const [key, value] of config) {
      if (GIT_COMMAND_SETTINGS.test(key)) this.script(parseShell(value.replace(/^!/, '')), depth + 1);
      // `git -c alias.x='!cmd' x` runs cmd in a shell.
      if (/^alias\./i.test(key) && key.slice(6) === sub) {
        if (value.startsWith('!')) return this.script(parseShell(value.slice(1)), depth + 1);
        const expanded = [literalWord('git'), ...value.split(/\s+/).filter(Boolean).map(literalWord), ...subArgs];
        return this.#invocation(expanded, inv.display, { kind: 'none' }, depth + 1);
      }
    }
    if (sub === 'push') {
      const force = texts.find((t) => /^--for/.test(t) || (t.length >= 4 && '--mirror'.startsWith(t)) || /^-[a-zA-Z]*f/.test(t) || /^\+/.test(t));
      if (force) return this.#deny('git-force-push', `'git push ${force}' overwrites the remote's history`, inv.display);
    }
    // A teammate may discard changes in its own checkout, and nowhere else (-C, --git-dir,
    // --work-tree, GIT_DIR=…, a cd elsewhere): there the rules of the shared workspace hold.
    if (!this.#options.ownWorktree || !this.#gitTargetsOwnCheckout(inv.args)) {
      if (sub === 'reset' && texts.some((t) => t.length >= 4 && '--hard'.startsWith(t))) {
        return this.#deny(
          'git-discard',
          "'git reset --hard' throws away uncommitted changes in the shared workspace (in a teammate's own worktree it is allowed)",
          inv.display,
        );
      }
      if (sub === 'clean') {
        const force = texts.some((t) => t === '--force' || /^-[a-zA-Z]*f/.test(t));
        const dry = texts.some((t) => t === '--dry-run' || /^-[a-zA-Z]*n/.test(t));
        if (force && !dry)
          return this.#deny(
            'git-discard',
            "'git clean -f' deletes untracked files in the shared workspace (in a teammate's own worktree it is allowed)",
            inv.display,
          );
      }
    }
    // Global options (-C dir) are left out of the words the allow-list sees.
    this.#readOnlyOrListed(inv, outer, ['git', ...(sub ? [sub] : []), ...texts], gitReadOnlyReason(sub, texts, globals));
  }

  /** Whether every repository or work tree this git command names is inside the agent's own root. */
  #gitTargetsOwnCheckout(args: Word[]): boolean {
    const root = this.#options.root;
    const inside = (p: string | undefined) =>
      p !== undefined && (p === root || p.startsWith(`${root}/`) || p === `${root}.git` || p.startsWith(`${root}.git/`));
    if (!inside(this.#cwd)) return false;
    for (const assignment of this.#assignments) {
      if (!/^GIT_(DIR|WORK_TREE|COMMON_DIR|INDEX_FILE|OBJECT_DIRECTORY)$/.test(assignment.name)) continue;
      if (assignment.dynamic || !inside(path.resolve(this.#cwd ?? root, assignment.value))) return false;
    }
    let cwd = this.#cwd;
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.text;
      if (!t.startsWith('-')) break;
      const flag = t.includes('=') ? t.slice(0, t.indexOf('=')) : t;
      if (!['-C', '--git-dir', '--work-tree'].includes(flag)) continue;
      const word = t.includes('=') ? literalWord(t.slice(t.indexOf('=') + 1)) : args[++i];
      if (!word || word.dynamic) return false;
      const where = path.resolve(cwd ?? root, word.text);
      if (!inside(where)) return false;
      if (flag === '-C') cwd = where;
    }
    return true;
  }

  #find(inv: Invocation, stdin: Stdin, depth: number): void {
    const texts = inv.args.map((a) => a.text);
    let first = texts.findIndex((t) => t.startsWith('-') || t === '(' || t === '!');
    if (first < 0) first = texts.length;
    const roots = inv.args.slice(0, first);
    const expression = texts.slice(first);
    const criticalRoot = (roots.length ? roots : [literalWord('.')]).map((r) => this.#paths.critical(r)).find(Boolean);
    // Tests like -name narrow what is found; `-name '*'` does not.
    const tests: string[] = [];
    for (let i = 0; i < expression.length; i++) {
      if (/^-(exec|execdir|ok|okdir)$/.test(expression[i]!)) {
        while (i < expression.length && expression[i] !== ';' && expression[i] !== '+') i++;
      } else if (expression[i]!.startsWith('-') && !FIND_ACTIONS.test(expression[i]!) && !FIND_NON_TESTS.test(expression[i]!) && expression[i + 1] !== '*') {
        tests.push(expression[i]!);
      }
    }
    const filtered = tests.length > 0;
    if (expression.includes('-delete') && criticalRoot && !filtered) {
      return this.#deny('find-delete', `'find -delete' on ${criticalRoot}`, inv.display);
    }
    for (let i = 0; i < expression.length; i++) {
      if (!/^-(exec|execdir|ok|okdir)$/.test(expression[i]!)) continue;
      let end = i + 1;
      while (end < expression.length && expression[end] !== ';' && expression[end] !== '+') end++;

      const placeholder = !filtered && roots[0] ? roots[0] : literalWord('FOUND');
      const command = inv.args.slice(first + i + 1, first + end).map((w) => (w.text === '{}' ? placeholder : w));
      this.#invocation(command, inv.display, stdin, depth + 1);
      // `find / -exec rm {} \;` deletes every file find finds, recursive flag or not.
      const runner = basename(expression[i + 1] ?? '');
      if (criticalRoot && !filtered && FIND_DELETERS.has(runner)) this.#deny('find-delete', `'find -exec ${runner}' on ${criticalRoot}`, inv.display);
      i = end;
    }
    if (this.#options.mode === 'auto') return;
    const action = expression.find((t) => FIND_ACTIONS.test(t) && !/^-(exec|execdir|ok|okdir)$/.test(t));
    if (action) this.#notReadOnly(`'find ${action}' writes or deletes files`, inv.display, 'find');
  }

  #shell(inv: Invocation, stdin: Stdin, depth: number): void {
    const { program, args, display } = inv;
    let i = 0;
    let command: Word | undefined;
    let readsStdin = false;
    for (; i < args.length; i++) {
      const t = args[i]!.text;
      if (t === '--' || t === '-') {
        readsStdin = t === '-' || i + 1 >= args.length;
        i++;
        break;
      }
      if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) {
        command = args[i + 1];
        break;
      }
      if (t === '-o' || t === '+o' || t === '-O' || t === '+O' || t === '--rcfile' || t === '--init-file') {
        i++;
        continue;
      }
      if (/^-[a-zA-Z]*s/.test(t)) readsStdin = true;
      if (!t.startsWith('-') && !t.startsWith('+')) break;
    }
    if (command) {
      const downloaded = command.subs.map(downloaderIn).find(Boolean);
      if (downloaded) return this.#deny('pipe-to-shell', `'${program} -c' runs code downloaded by ${downloaded}`, display);
      if (command.dynamic) this.#notReadOnly(`'${program} -c' runs a command known only at run time`, display);
      return this.script(parseShell(command.text), depth + 1, stdin);
    }
    const file = readsStdin ? undefined : args[i];
    if (file) {
      const downloaded = file.subs.map(downloaderIn).find(Boolean);
      if (downloaded) return this.#deny('pipe-to-shell', `'${program}' runs code downloaded by ${downloaded}`, display);
      if (file.text === '/dev/stdin' && stdin.kind === 'download')
        return this.#deny('pipe-to-shell', `runs code downloaded by ${stdin.by} with ${program}`, display);
      // The offer and the match agree: an entry `bash scripts/x.sh` allows this script, word for word.
      const words = [program, file.text];
      const listed = this.#options.allow.some((entry) => matchesPrefix(entry, words));
      return this.#notReadOnly(`'${program} ${file.raw}' runs a script`, display, approvalPrefix(words), listed);
    }
    // The shell reads its commands from stdin.
    if (stdin.kind === 'static') return this.script(parseShell(stdin.text), depth + 1);
    if (stdin.kind === 'download') return this.#deny('pipe-to-shell', `runs code downloaded by ${stdin.by} with ${program}, unseen`, display);
    this.#notReadOnly(`'${program}' runs commands from its input, which cannot be checked`, display);
  }

  /** Resolves a path word (~, relative) to an absolute path, or undefined when it cannot. */
  #resolve(word: Word, text = word.text): string | undefined {
    let p = text;
    if (word.tilde && (p === '~' || p.startsWith('~/'))) p = this.#options.home + p.slice(1);
    else if (word.tilde) return undefined;
    if (word.dynamic && text === word.text) return undefined;
    if (!p.startsWith('/')) {
      if (this.#cwd === undefined) return undefined;
      p = path.join(this.#cwd, p);
    }
    return path.normalize(p);
  }
}
