// What a shell command may do under a permission mode. Every simple command the line would run
// (found by shell-syntax.ts, through quotes, wrappers like env/xargs/timeout, `bash -c`, eval,
// substitutions and pipes into shells) is checked against:
//   1. the deny-list: destructive commands, refused in EVERY mode, with the rule that matched;
//   2. plan mode: only commands that read;
//   3. ask mode: commands that read, or match the allow-list, run; others need the person's approval,
//      and so do redirections that write outside the workspace or into a protected path.
// auto mode runs everything the deny-list lets through. The deny-list is a guard against accidents
// and obvious tricks, not a sandbox: code run by a script or an interpreter is not inspected.
import os from 'node:os';
import path from 'node:path';
import type { PermissionMode } from './permission-mode.js';
import { parseShell, staticOutput, type Redirect, type Script, type SimpleCommand, type Word } from './shell-syntax.js';

export interface PolicyOptions {
  mode: PermissionMode;
  /** The directory the agent works in (the workspace, or its own worktree). */
  root: string;
  /** The root is the agent's own git worktree: discarding changes there loses nobody else's work. */
  ownWorktree?: boolean;
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
  ]);
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

// ---- tables -------------------------------------------------------------------------------------

const READ_ONLY_PROGRAMS = new Set([
  'ls', 'cat', 'head', 'tail', 'wc', 'grep', 'rg', 'egrep', 'fgrep', 'pwd', 'echo', 'printf', 'tree', 'stat',
  'file', 'du', 'df', 'sort', 'uniq', 'cut', 'tr', 'diff', 'cmp', 'basename', 'dirname', 'realpath', 'readlink', 'which',
  'date', 'true', 'false', 'test', '[', 'nl', 'column', 'jq', 'less', 'more', 'md5sum', 'sha1sum', 'sha256sum', 'sha512sum',
  'cksum', 'comm', 'paste', 'fold', 'rev', 'tac', 'od', 'hexdump', 'strings', 'seq', 'expr', 'whoami', 'id', 'uname',
  'printenv', 'env', 'type', 'cd', 'pushd', 'popd', 'sleep', 'base64',
]);

const READ_ONLY_GIT = new Set([
  'status', 'log', 'diff', 'show', 'branch', 'rev-parse', 'ls-files', 'blame', 'grep', 'describe', 'shortlog', 'cat-file',
  'ls-tree', 'merge-base', 'name-rev', 'rev-list', 'show-ref', 'for-each-ref', 'whatchanged', 'version',
]);

/** Programs that run the rest of their words as a command; value: options that take an argument. */
const WRAPPERS: Record<string, { valued: Set<string>; stopAtFirstWord?: boolean }> = {
  command: { valued: new Set() },
  builtin: { valued: new Set() },
  exec: { valued: new Set(['-a']) },
  nohup: { valued: new Set() },
  nice: { valued: new Set(['-n', '--adjustment']) },
  time: { valued: new Set(['-f', '--format', '-o', '--output']) },
  timeout: { valued: new Set(['-k', '--kill-after', '-s', '--signal']) },
  env: { valued: new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']) },
  stdbuf: { valued: new Set(['-i', '-o', '-e']) },
  setsid: { valued: new Set() },
  ionice: { valued: new Set(['-c', '-n', '-p', '-P', '-u']) },
  chrt: { valued: new Set() },
  taskset: { valued: new Set() },
  unbuffer: { valued: new Set() },
  flock: { valued: new Set(['-w', '--timeout', '-E', '--conflict-exit-code']) },
  watch: { valued: new Set(['-n', '--interval', '-d']) },
  xargs: { valued: new Set(['-I', '-i', '-n', '--max-args', '-P', '--max-procs', '-L', '--max-lines', '-d', '--delimiter', '-s', '--max-chars', '-a', '--arg-file', '-E', '-e']) },
  npx: { valued: new Set(['-p', '--package', '-c', '--call']) },
  pnpx: { valued: new Set() },
  bunx: { valued: new Set() },
  busybox: { valued: new Set() },
  strace: { valued: new Set(['-e', '-o', '-p', '-s', '-u', '-E', '-a', '-X', '-b', '-I', '-O', '-P']) },
  ltrace: { valued: new Set(['-e', '-o', '-p', '-s', '-u', '-a', '-n']) },
};

/** git settings whose value is a command git runs (`git -c core.sshCommand='…' fetch`). */
const GIT_COMMAND_SETTINGS = /^(core\.(sshcommand|pager|editor|fsmonitor|askpass)|diff\.external|sequence\.editor|credential\.helper|.*\.(textconv|command|cmd|process|clean|smudge))$/i;

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'yash', 'fish', 'csh', 'tcsh', 'rbash']);
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'lua', 'pwsh', 'Rscript', 'deno', 'bun']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'xh', 'lwp-request']);
const PRIVILEGE = new Set(['sudo', 'doas', 'su', 'pkexec', 'run0', 'sudoedit']);
const POWER = new Set(['shutdown', 'reboot', 'halt', 'poweroff']);
const POWER_VERBS = new Set(['poweroff', 'reboot', 'halt', 'kexec', 'suspend', 'hibernate', 'hybrid-sleep', 'suspend-then-hibernate', 'rescue', 'emergency', 'soft-reboot', 'isolate']);
const DISK_TOOLS = /^(mkfs(\..+)?|mke2fs|mkswap|mkdosfs|mkntfs|mkexfatfs|wipefs|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|blkdiscard)$/;
const SYSTEM_DIRS = new Set([
  '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/media', '/mnt', '/opt', '/proc', '/root',
  '/run', '/sbin', '/srv', '/sys', '/tmp', '/usr', '/var', '/snap', '/Users', '/System', '/Library', '/Applications', '/private',
]);
const HARMLESS_DEVICES = /^\/dev\/(null|zero|full|random|urandom|stdin|stdout|stderr|tty|fd\/\d+|pts\/.*|shm\/.*)$/;
const WRITE_REDIRECTS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&']);
/** find actions that run or write; everything else in a find expression only selects or prints. */
const FIND_ACTIONS = /^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/;
/** find options that are not tests: an expression of only these selects everything. */
const FIND_NON_TESTS = /^-(depth|maxdepth|mindepth|xdev|mount|follow|L|H|P|print|print0|d|daystart|noleaf|ignore_readdir_race|nowarn|warn)$/;

// ---- the walk -----------------------------------------------------------------------------------

type Stdin = { kind: 'none' } | { kind: 'static'; text: string } | { kind: 'download'; by: string } | { kind: 'unknown' };

interface Finding {
  kind: 'deny' | 'plan' | 'ask';
  rule?: string;
  reason: string;
  command: string;
  prefix?: string;
}

interface Invocation {
  program: string;
  args: Word[];
  display: string;
}

const MAX_DEPTH = 12;

class Walker {
  readonly #options: Required<Omit<PolicyOptions, 'ownWorktree'>> & { ownWorktree: boolean };
  readonly #findings: Finding[] = [];
  /** Where relative paths point: the root, until a `cd`; undefined once a `cd` went somewhere unknown. */
  #cwd: string | undefined;

  constructor(options: PolicyOptions & { home: string; allow: string[] }) {
    this.#options = { ...options, ownWorktree: options.ownWorktree ?? false };
    this.#cwd = options.root;
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
      else if (redirect.op === '<<<' && redirect.target) stdin = redirect.target.dynamic ? { kind: 'unknown' } : { kind: 'static', text: `${redirect.target.text}\n` };
      else if (redirect.op === '<' || redirect.op === '<>') stdin = { kind: 'unknown' };
    }
    for (const redirect of command.redirects) this.#redirect(redirect, command.display);

    const words = stripPrefixWords(command.words);
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
    const [head, ...args] = words;
    if (!head) return;
    if (head.dynamic) {
      const danger = args.map((a) => this.#critical(a)).find(Boolean);
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
          const what = this.#critical(operand);
          if (what) return this.#deny('rm-recursive', `recursive delete of ${what}`, display);
        }
      }
    }
    if (program === 'mv') {
      const { operands } = splitOptions(args);
      for (const operand of operands.slice(0, -1)) {
        const what = this.#critical(operand, false);
        if (what) return this.#deny('mv-critical', `moves away ${what}`, display);
      }
    }
    if (program === 'chmod' || program === 'chown' || program === 'chgrp') {
      const { flags, operands } = splitOptions(args);
      const recursive = flags.some((f) => f === '--recursive' || /^-[a-zA-Z]*R/.test(f));
      for (const operand of operands) {
        const what = this.#critical(operand, false);
        if (what && (recursive || this.#resolve(operand) === '/')) {
          return this.#deny('chmod-recursive', `'${program}${recursive ? ' -R' : ''}' on ${what}`, display);
        }
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
      return this.#notReadOnly(`'${program}' runs a script file`, display, program);
    }
    const wrapper = WRAPPERS[program];
    const around = [...outer, words.map((w) => w.text)];
    if (wrapper) {
      const inner = unwrap(program, args, wrapper.valued);
      if (inner === undefined) return this.#modeCheck(inv, outer); // only options: e.g. `env` prints the environment
      if (program === 'watch') return this.script(parseShell(inner.map((w) => w.text).join(' ')), depth + 1);
      if (program === 'xargs') {
        // The items come from stdin; when that is plain text, they are the last arguments.
        const items = stdin.kind === 'static' ? stdin.text.split(/\s+/).filter(Boolean).map((t) => literalWord(t)) : [];
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
      const force = texts.find(
        (t) => /^--for/.test(t) || (t.length >= 4 && '--mirror'.startsWith(t)) || /^-[a-zA-Z]*f/.test(t) || /^\+/.test(t),
      );
      if (force) return this.#deny('git-force-push', `'git push ${force}' overwrites the remote's history`, inv.display);
    }
    if (!this.#options.ownWorktree) {
      if (sub === 'reset' && texts.some((t) => t.length >= 4 && '--hard'.startsWith(t))) {
        return this.#deny('git-discard', "'git reset --hard' throws away uncommitted changes in the shared workspace (in a teammate's own worktree it is allowed)", inv.display);
      }
      if (sub === 'clean') {
        const force = texts.some((t) => t === '--force' || /^-[a-zA-Z]*f/.test(t));
        const dry = texts.some((t) => t === '--dry-run' || /^-[a-zA-Z]*n/.test(t));
        if (force && !dry) return this.#deny('git-discard', "'git clean -f' deletes untracked files in the shared workspace (in a teammate's own worktree it is allowed)", inv.display);
      }
    }
    // Global options (-C dir) are left out of the words the allow-list sees.
    this.#readOnlyOrListed(inv, outer, ['git', ...(sub ? [sub] : []), ...texts], gitReadOnlyReason(sub, texts, globals));
  }

  #find(inv: Invocation, stdin: Stdin, depth: number): void {
    const texts = inv.args.map((a) => a.text);
    let first = texts.findIndex((t) => t.startsWith('-') || t === '(' || t === '!');
    if (first < 0) first = texts.length;
    const roots = inv.args.slice(0, first);
    const expression = texts.slice(first);
    const criticalRoot = (roots.length ? roots : [literalWord('.')]).map((r) => this.#critical(r)).find(Boolean);
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
      if (file.text === '/dev/stdin' && stdin.kind === 'download') return this.#deny('pipe-to-shell', `runs code downloaded by ${stdin.by} with ${program}`, display);
      return this.#notReadOnly(`'${program} ${file.raw}' runs a script`, display, `${program} ${file.text}`);
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

  /**
   * What a path word names that must never be deleted or given away wholesale, if anything:
   * `/`, a system directory, a home directory and (with `workspace`) the workspace, what holds it, its .git.
   */
  #critical(word: Word, workspace = true): string | undefined {
    const direct = this.#criticalText(word, word.text, workspace);
    if (direct) return direct;
    if (word.dynamic && word.emptyText !== word.text) {
      const empty = this.#criticalText(word, word.emptyText, workspace);
      if (empty) return `${empty} if ${word.raw.match(/\$\{?\w+\}?|\$\(.*\)|`.*`/)?.[0] ?? 'a variable'} is empty`;
    }
    return undefined;
  }

  #criticalText(word: Word, text: string, workspace: boolean): string | undefined {
    if (!text) return undefined;
    if (word.tilde && /^~[^/]+/.test(text)) return `another user's home directory (${text})`;
    let p = text;
    let everything = false;
    for (;;) {
      if (/(^|\/)[.*]*\*[.*]*$/.test(p) && p !== '*' && p !== '.*' && p.includes('/')) {
        p = p.replace(/\/[^/]*$/, '') || '/';
        everything = true;
      } else if (/^[.*]*\*[.*]*$/.test(p)) {
        p = '.';
        everything = true;
      } else if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
      else if (p.length > 2 && p.endsWith('/.')) p = p.slice(0, -2);
      else break;
    }
    const where = this.#resolve(word, p);
    if (where === undefined) return undefined;
    const label = everything ? `everything in ${where}` : where;
    const { root, home } = this.#options;
    if (where === '/') return `the root directory (${text})`;
    const depthOne = /^\/[^/]+$/.test(where);
    if (SYSTEM_DIRS.has(where) || (depthOne && word.glob)) return `the system directory ${label}`;
    if (where === home || /^\/(home|Users)\/[^/]+$/.test(where)) return `a home directory (${label})`;
    if (!workspace) return undefined;
    if (where === root) return `the workspace (${label})`;
    if (root.startsWith(`${where}/`)) return `a directory that holds the workspace (${label})`;
    const inRoot = path.relative(root, where);
    if (inRoot === '.git') return `the workspace's git history (${text})`;
    if (inRoot === '.team' || inRoot === '.tasks') return `huddle's own state (${text})`;
    return undefined;
  }
}

// ---- helpers ------------------------------------------------------------------------------------

const RESERVED = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'case', 'esac', 'in', 'function', 'coproc', '((', '))', '[[', ']]']);

/** Drops reserved words (`if`, `{`, `do`…) and leading assignments: what remains starts with the program. */
function stripPrefixWords(words: Word[]): Word[] {
  let i = 0;
  while (i < words.length) {
    const word = words[i]!;
    if ((!word.quoted && RESERVED.has(word.text)) || word.assignment) i++;
    else break;
  }
  const rest = words.slice(i);
  // `for x in a b; do …` and `select`: the list is data.
  if (rest[0] && !rest[0].quoted && (rest[0].text === 'for' || rest[0].text === 'select')) return [];
  // Closing words of compound commands that were left as a command of their own.
  return rest.filter((w, k) => !(k === rest.length - 1 && !w.quoted && (w.text === '}' || w.text === ']]')));
}

function commandProgram(command: SimpleCommand): string | undefined {
  let words = stripPrefixWords(command.words);
  for (let guard = 0; guard < 4 && words[0]; guard++) {
    const program = basename(words[0].text);
    const wrapper = WRAPPERS[program];
    if (!wrapper) return program;
    const inner = unwrap(program, words.slice(1), wrapper.valued);
    if (!inner) return program;
    words = inner;
  }
  return words[0] ? basename(words[0].text) : undefined;
}

function downloaderIn(script: Script): string | undefined {
  for (const pipeline of script.pipelines) {
    for (const command of pipeline.commands) {
      const program = commandProgram(command);
      if (program && DOWNLOADERS.has(program)) return program;
      for (const word of command.words) for (const sub of word.subs) {
        const found = downloaderIn(sub);
        if (found) return found;
      }
    }
  }
  return undefined;
}

/** The command a wrapper runs: its words after its own options (and, for env, assignments). */
function unwrap(program: string, args: Word[], valued: Set<string>): Word[] | undefined {
  let i = 0;
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === '--') {
      i++;
      break;
    }
    if (program === 'env' && args[i]!.assignment) continue;
    if (program === 'timeout' && !t.startsWith('-')) {
      i++; // the duration
      break;
    }
    if ((program === 'chrt' || program === 'taskset' || program === 'flock') && !t.startsWith('-')) {
      i++; // the priority, the CPU mask, the lock file
      break;
    }
    if (!t.startsWith('-') || t === '-') break;
    if (valued.has(t)) i++;
  }
  const inner = args.slice(i);
  if (program === 'flock' && inner[0]?.text === '-c') return undefined;
  return inner.length ? inner : undefined;
}

function splitOptions(args: Word[]): { flags: string[]; operands: Word[] } {
  const flags: string[] = [];
  const operands: Word[] = [];
  let ended = false;
  for (const arg of args) {
    if (!ended && arg.text === '--') ended = true;
    else if (!ended && arg.text.startsWith('-') && arg.text !== '-') flags.push(arg.text);
    else operands.push(arg);
  }
  return { flags, operands };
}

function killsEverything(texts: string[]): boolean {
  let i = 0;
  if (texts[0] === '-s' || texts[0] === '-n') i = 2;
  else if (texts[0] !== undefined && texts[0] !== '--' && /^-/.test(texts[0]) && texts[0] !== '-1') i = 1;
  else if (texts[0] === '-1' && texts.length > 1) i = 1; // `kill -1 PID`: signal 1 (HUP)
  const targets = texts.slice(i).filter((t) => t !== '--');
  return targets.includes('-1');
}

function gitParts(args: Word[]): { sub: string | undefined; subArgs: Word[]; config: Map<string, string>; globals: string[] } {
  const config = new Map<string, string>();
  const globals: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix'].includes(t)) {
      globals.push(t);
      if (t === '-c') {
        const setting = args[i + 1]?.text ?? '';
        const eq = setting.indexOf('=');
        config.set(eq < 0 ? setting : setting.slice(0, eq), eq < 0 ? 'true' : setting.slice(eq + 1));
      }
      i++;
    } else if (t.startsWith('-')) globals.push(t);
    else break;
  }
  return { sub: args[i]?.text, subArgs: args.slice(i + 1), config, globals };
}

function gitReadOnlyReason(sub: string | undefined, texts: string[], globals: string[]): string | undefined {
  if (!sub) return "'git' without a subcommand";
  if (globals.includes('-c') || globals.some((g) => g.startsWith('--exec-path'))) return "'git -c' may run configured commands";
  if (!READ_ONLY_GIT.has(sub)) return `'git ${sub}' may change the repository`;
  if (texts.some((t) => t.startsWith('--output') || t.startsWith('--ext-diff'))) return `'git ${sub} --output' writes a file`;
  if (sub === 'branch') {
    if (texts.some((t) => /^(-[dDmMcCfu]|--delete|--move|--copy|--force|--set-upstream-to.*|--unset-upstream|--edit-description)$/.test(t))) {
      return "'git branch' with that option changes branches";
    }
    const lists = texts.some((t) => /^(-l|--list|-a|--all|-r|--remotes|--contains|--no-contains|--merged|--no-merged|--points-at)$/.test(t));
    if (!lists && texts.some((t) => !t.startsWith('-'))) return "'git branch NAME' creates a branch";
  }
  return undefined;
}

function readOnlyReason(inv: Invocation): string | undefined {
  const { program } = inv;
  const texts = inv.args.map((a) => a.text);
  if (!READ_ONLY_PROGRAMS.has(program)) return `'${program}' is not on the read-only list`;
  if (program === 'sort' && texts.some((t) => t === '-o' || t.startsWith('--output') || /^-[a-zA-Z]*o/.test(t))) return "'sort -o' writes a file";
  if (program === 'tree' && texts.includes('-o')) return "'tree -o' writes a file";
  if (program === 'uniq' && texts.filter((t) => !t.startsWith('-')).length >= 2) return "'uniq IN OUT' writes OUT";
  if (program === 'date' && texts.some((t) => t === '-s' || t.startsWith('--set'))) return "'date -s' sets the clock";
  return undefined;
}

function readsCodeFromStdin(program: string, texts: string[]): boolean {
  if (SHELLS.has(program)) {
    if (texts.some((t) => /^-[a-zA-Z]*c/.test(t))) return false;
    const operand = texts.find((t) => !t.startsWith('-') && !t.startsWith('+'));
    return operand === undefined || operand === '/dev/stdin' || texts.some((t) => /^-[a-zA-Z]*s/.test(t));
  }
  if (texts.some((t) => ['-c', '-e', '-E', '--eval', '-m', '-r', '-p', '--print'].includes(t))) return false;
  const operand = texts.find((t) => !t.startsWith('-'));
  return operand === undefined || operand === '-' || operand === '/dev/stdin';
}

function isDevice(p: string): boolean {
  return p.startsWith('/dev/') && !HARMLESS_DEVICES.test(path.normalize(p));
}

function basename(program: string): string {
  return program.slice(program.lastIndexOf('/') + 1);
}

function literalWord(text: string): Word {
  return { text, emptyText: text, dynamic: false, quoted: false, glob: false, tilde: false, procSub: false, subs: [], raw: text };
}

function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Programs whose first word after the options is a subcommand worth keeping in an allow-list entry. */
const WITH_SUBCOMMANDS = new Set(['git', 'npm', 'npx', 'pnpm', 'yarn', 'bun', 'cargo', 'go', 'docker', 'kubectl', 'pip', 'pip3', 'make', 'deno', 'gh', 'uv', 'poetry', 'dotnet', 'mvn', 'gradle']);

/** What "approve always" allow-lists for a command: its program, plus the subcommand for git, npm and the like. */
export function approvalPrefix(words: string[]): string {
  const [program, ...rest] = words;
  if (!program) return '';
  const name = basename(program);
  if (!WITH_SUBCOMMANDS.has(name)) return name;
  let sub = rest.find((w) => !w.startsWith('-'));
  if (name === 'npm' && sub === 'run') sub = `run ${rest[rest.indexOf('run') + 1] ?? ''}`.trim();
  return sub ? `${name} ${sub}` : name;
}

/** An allow-list entry matches a command that starts with its words. */
export function matchesPrefix(entry: string, words: string[]): boolean {
  const tokens = entry.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0 || tokens.length > words.length) return false;
  return tokens.every((token, i) => (i === 0 ? basename(token) === basename(words[0]!) : token === words[i]));
}
