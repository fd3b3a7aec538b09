// Helpers of the command policy: reading a simple command's words (wrappers, options, git's
// global options), whether a program only reads, and the allow-list's prefixes.
import type { Script, SimpleCommand, Word } from './shell-syntax.js';
import { DOWNLOADERS, HARMLESS_DEVICES, INTERPRETERS, READ_ONLY_GIT, READ_ONLY_PROGRAMS, SHELLS, WRAPPERS } from './policy-tables.js';
import path from 'node:path';

/** A simple command as the policy sees it: the program's base name and its argument words. */
export interface Invocation {
  program: string;
  args: Word[];
  display: string;
}

export const RESERVED = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'case',
  'esac',
  'in',
  'function',
  'coproc',
  '((',
  '))',
  '[[',
  ']]',
]);

/** Drops reserved words (`if`, `{`, `do`…) and leading assignments: what remains starts with the program. */
export function stripPrefixWords(words: Word[]): Word[] {
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

export function commandProgram(command: SimpleCommand): string | undefined {
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

export function downloaderIn(script: Script): string | undefined {
  for (const pipeline of script.pipelines) {
    for (const command of pipeline.commands) {
      const program = commandProgram(command);
      if (program && DOWNLOADERS.has(program)) return program;
      for (const word of command.words)
        for (const sub of word.subs) {
          const found = downloaderIn(sub);
          if (found) return found;
        }
    }
  }
  return undefined;
}

/** The command a wrapper runs: its words after its own options (and, for env, assignments). */
export function unwrap(program: string, args: Word[], valued: Set<string>): Word[] | undefined {
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

export function splitOptions(args: Word[]): { flags: string[]; operands: Word[] } {
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

export function killsEverything(texts: string[]): boolean {
  let i = 0;
  if (texts[0] === '-s' || texts[0] === '-n') i = 2;
  else if (texts[0] !== undefined && texts[0] !== '--' && /^-/.test(texts[0]) && texts[0] !== '-1') i = 1;
  else if (texts[0] === '-1' && texts.length > 1) i = 1; // `kill -1 PID`: signal 1 (HUP)
  const targets = texts.slice(i).filter((t) => t !== '--');
  return targets.includes('-1');
}

export function gitParts(args: Word[]): { sub: string | undefined; subArgs: Word[]; config: Map<string, string>; globals: string[] } {
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

export function gitReadOnlyReason(sub: string | undefined, texts: string[], globals: string[]): string | undefined {
  if (!sub) return "'git' without a subcommand";
  if (globals.includes('-c') || globals.some((g) => g.startsWith('--exec-path'))) return "'git -c' may run configured commands";
  if (!READ_ONLY_GIT.has(sub)) return `'git ${sub}' may change the repository`;
  if (texts.some((t) => t.startsWith('--output') || t.startsWith('--ext-diff'))) return `'git ${sub} --output' writes a file`;
  if (texts.some((t) => /^(-O|--open-files-in-pager)/.test(t) || /^--(textconv|filters)$/.test(t) || t.startsWith('--exec'))) {
    return `'git ${sub}' with that option runs another program`;
  }
  if (sub === 'branch') {
    if (texts.some((t) => /^(-[dDmMcCfu]|--delete|--move|--copy|--force|--set-upstream-to.*|--unset-upstream|--edit-description)$/.test(t))) {
      return "'git branch' with that option changes branches";
    }
    const lists = texts.some((t) => /^(-l|--list|-a|--all|-r|--remotes|--contains|--no-contains|--merged|--no-merged|--points-at)$/.test(t));
    if (!lists && texts.some((t) => !t.startsWith('-'))) return "'git branch NAME' creates a branch";
  }
  return undefined;
}

export function readOnlyReason(inv: Invocation): string | undefined {
  const { program } = inv;
  const texts = inv.args.map((a) => a.text);
  if (!READ_ONLY_PROGRAMS.has(program)) return `'${program}' is not on the read-only list`;
  if (program === 'sort' && texts.some((t) => t === '-o' || t.startsWith('--output') || /^-[a-zA-Z]*o/.test(t))) return "'sort -o' writes a file";
  if (program === 'sort' && texts.some((t) => t.startsWith('--compress-program') || t.startsWith('--temporary-directory') || /^-[a-zA-Z]*T/.test(t))) {
    return "'sort --compress-program' runs a program (and -T writes temp files)";
  }
  if (program === 'rg' && texts.some((t) => /^--(pre|hostname-bin|search-zip|pre-glob)/.test(t) || /^-[a-zA-Z]*z/.test(t)))
    return "'rg --pre' runs another program on each file";
  if ((program === 'less' || program === 'more') && texts.some((t) => t.startsWith('+') || t.startsWith('-k') || t.startsWith('--lesskey')))
    return `'${program} +…' runs commands`;
  if (program === 'file' && texts.some((t) => t === '-C' || t === '--compile')) return "'file -C' writes a compiled magic file";
  if (program === 'tree' && texts.some((t) => t.startsWith('--output'))) return "'tree --output' writes a file";
  if (program === 'jq' && texts.some((t) => t.startsWith('-L') || t === '--library-path')) return "'jq -L' loads code modules";
  if (program === 'tree' && texts.includes('-o')) return "'tree -o' writes a file";
  if (program === 'uniq' && texts.filter((t) => !t.startsWith('-')).length >= 2) return "'uniq IN OUT' writes OUT";
  if (program === 'date' && texts.some((t) => t === '-s' || t.startsWith('--set'))) return "'date -s' sets the clock";
  return undefined;
}

export function readsCodeFromStdin(program: string, texts: string[]): boolean {
  if (SHELLS.has(program)) {
    if (texts.some((t) => /^-[a-zA-Z]*c/.test(t))) return false;
    const operand = texts.find((t) => !t.startsWith('-') && !t.startsWith('+'));
    return operand === undefined || operand === '/dev/stdin' || texts.some((t) => /^-[a-zA-Z]*s/.test(t));
  }
  if (texts.some((t) => ['-c', '-e', '-E', '--eval', '-m', '-r', '-p', '--print'].includes(t))) return false;
  const operand = texts.find((t) => !t.startsWith('-'));
  return operand === undefined || operand === '-' || operand === '/dev/stdin';
}

export function isDevice(p: string): boolean {
  return p.startsWith('/dev/') && !HARMLESS_DEVICES.test(path.normalize(p));
}

export function basename(program: string): string {
  return program.slice(program.lastIndexOf('/') + 1);
}

export function literalWord(text: string): Word {
  return { text, emptyText: text, dynamic: false, quoted: false, glob: false, tilde: false, procSub: false, subs: [], raw: text };
}

export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Programs whose first word after the options is a subcommand worth keeping in an allow-list entry. */
export const WITH_SUBCOMMANDS = new Set([
  'git',
  'npm',
  'npx',
  'pnpm',
  'yarn',
  'bun',
  'cargo',
  'go',
  'docker',
  'kubectl',
  'pip',
  'pip3',
  'make',
  'deno',
  'gh',
  'uv',
  'poetry',
  'dotnet',
  'mvn',
  'gradle',
]);

/** Programs that run whatever code they are given: allow-listed only with what they run (never bare). */
const RUNS_ANY_CODE = new Set([...INTERPRETERS, ...SHELLS, 'npx', 'pnpx', 'bunx', 'uvx', 'source', '.']);

/**
 * What "approve always" allow-lists for a command: its program, plus the subcommand for git, npm
 * and the like, or the script an interpreter runs (`node scripts/build.mjs`, `python -m pytest`).
 * Empty when only the bare interpreter could be named (`node -e …`): allowing `node` would allow
 * every script. Entries match word for word from the start (matchesPrefix), so the offer is what
 * the match checks.
 */
export function approvalPrefix(words: string[]): string {
  const [program, ...rest] = words;
  if (!program) return '';
  const name = basename(program);
  if (RUNS_ANY_CODE.has(name) && !WITH_SUBCOMMANDS.has(name)) {
    const [first, second] = rest;
    if (first === '-m' && second && !second.startsWith('-')) return `${name} -m ${second}`;
    return first && !first.startsWith('-') && !first.startsWith('+') ? `${name} ${first}` : '';
  }
  if (!WITH_SUBCOMMANDS.has(name)) return name;
  let sub = rest.find((w) => !w.startsWith('-'));
  if (name === 'npm' && sub === 'run') sub = `run ${rest[rest.indexOf('run') + 1] ?? ''}`.trim();
  if (sub) return `${name} ${sub}`;
  return RUNS_ANY_CODE.has(name) ? '' : name;
}

/** An allow-list entry matches a command that starts with its words. */
export function matchesPrefix(entry: string, words: string[]): boolean {
  const tokens = entry.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0 || tokens.length > words.length) return false;
  return tokens.every((token, i) => (i === 0 ? basename(token) === basename(words[0]!) : token === words[i]));
}
