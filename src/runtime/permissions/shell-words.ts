// The word-level half of the shell reader (shell-syntax.ts): quote-removed characters become
// words (brace expansion, splitting of unquoted expansions at IFS), what simple commands plainly
// print (`$(echo rm)`, `$(pwd)`), and the functions a line defines (for the policy to check each
// call with its arguments, and to spot fork bombs).
import type { Script, SimpleCommand, Word } from './shell-ast.js';

/** Not a shell variable (it has a space): where `git rev-parse --git-dir` points, set by the policy. */
export const GIT_DIR_VAR = ' git-dir';

export interface Char {
  c: string;
  /** Quoted or escaped. */
  q: boolean;
  /** From an unquoted expansion: split into words at blanks. */
  s?: boolean;
  /** An expansion whose value is unknown (c holds its source). */
  u?: boolean;
}

/** Tokens in source order with their source span, for finding function definitions. */
export type FlatToken = ({ t: 'w'; text: string; quoted: boolean } | { t: 'op'; op: string }) & { start: number; end: number };

/**
 * What a simple command prints, when that is plain from its words alone (echo, printf, a here-doc
 * through cat, `command -v`/`which`): lets `$(echo rm)` and `echo 'rm -rf /' | sh` be seen through.
 */
export function staticOutput(command: SimpleCommand, vars?: Map<string, string>): string | undefined {
  const words = command.words.filter((w, i) => !(w.assignment && command.words.slice(0, i).every((x) => x.assignment)));
  if (words.some((w) => w.dynamic)) return undefined;
  const [first, ...args] = words.map((w) => w.text);
  if (first === undefined) return undefined;
  const program = first.slice(first.lastIndexOf('/') + 1);
  // Where the command runs: what `rm -rf $(pwd)` and `"$(git rev-parse --show-toplevel)"` name.
  const pwd = vars?.get('PWD');
  if (pwd !== undefined && program === 'pwd') return `${pwd}\n`;
  if (pwd !== undefined && program === 'git' && args.includes('rev-parse')) {
    if (args.some((a) => a === '--show-toplevel' || a === '--show-superproject-working-tree')) return `${pwd}\n`;
    if (args.some((a) => a === '--git-dir' || a === '--git-common-dir' || a === '--absolute-git-dir')) return `${vars?.get(GIT_DIR_VAR) ?? `${pwd}/.git`}\n`;
  }
  if (pwd !== undefined && (program === 'realpath' || program === 'readlink') && (args.at(-1) === '.' || args.length === 0)) return `${pwd}\n`;
  if (program === 'echo') {
    while (args[0] !== undefined && /^-[neE]+$/.test(args[0])) args.shift();
    return `${args.join(' ')}\n`;
  }
  if (program === 'printf') {
    const [format, ...rest] = args;
    if (format === undefined) return undefined;
    let i = 0;
    return format.replace(/%s|\\n|\\t/g, (m) => (m === '\\n' ? '\n' : m === '\\t' ? '\t' : (rest[i++] ?? '')));
  }
  if (program === 'which' || (program === 'command' && args[0] === '-v') || (program === 'type' && args[0] === '-P')) {
    const name = args.find((a) => !a.startsWith('-'));
    return name === undefined ? undefined : `${name}\n`;
  }
  if (program === 'cat' && args.length === 0) {
    const feed = command.redirects.find((r) => r.heredoc || r.op === '<<<');
    if (feed?.heredoc) return feed.heredoc.subs.length ? undefined : feed.heredoc.body;
    if (feed?.target && !feed.target.dynamic) return `${feed.target.text}\n`;
  }
  return undefined;
}

export function pushText(chars: Char[], text: string, inDouble: boolean): void {
  for (const c of text) chars.push(inDouble ? { c, q: true } : { c, q: false, s: true });
}

export function emptyWord(raw: string, subs: Script[]): Word {
  return { text: '', emptyText: '', dynamic: false, quoted: true, glob: false, tilde: false, procSub: false, subs, raw };
}

/** Brace expansion, then splitting of unquoted expansion results, then the Word objects. */
export function finishWord(chars: Char[], raw: string, subs: Script[], quotedAny: boolean, procSub: boolean, ifs: string | undefined): Word[] {
  // Unquoted expansions split at the characters of IFS (`IFS=,; x=rm,-rf,/; $x` runs rm -rf /).
  const splitsAt = (c: string) => (ifs === undefined ? /\s/.test(c) : ifs.includes(c));
  const assign = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(chars.map((ch) => (ch.q || ch.u || ch.s ? '\0' : ch.c)).join(''));
  if (assign) {
    const word = build(chars, raw, subs, quotedAny, procSub);
    const valueChars = chars.slice(assign[0].length);
    word.assignment = { name: assign[1]!, value: valueChars.map((ch) => ch.c).join(''), dynamic: valueChars.some((ch) => ch.u) };
    return [word];
  }
  const expanded = expandBraces(chars, 0);
  const words: Word[] = [];
  for (const variant of expanded) {
    let current: Char[] = [];
    let started = false;
    for (const ch of variant) {
      if (ch.s && splitsAt(ch.c)) {
        if (current.length) words.push(build(current, raw, subs, quotedAny, procSub));
        current = [];
        started = false;
        continue;
      }
      current.push(ch);
      started = true;
    }
    if (started || (quotedAny && current.length === 0 && !variant.some((ch) => ch.s))) words.push(build(current, raw, subs, quotedAny, procSub));
  }
  return words;
}

export function build(chars: Char[], raw: string, subs: Script[], quotedAny: boolean, procSub: boolean): Word {
  return {
    text: chars.map((ch) => ch.c).join(''),
    emptyText: chars
      .filter((ch) => !ch.u)
      .map((ch) => ch.c)
      .join(''),
    dynamic: chars.some((ch) => ch.u),
    quoted: quotedAny || chars.some((ch) => ch.q),
    glob: chars.some((ch) => !ch.q && !ch.u && (ch.c === '*' || ch.c === '?' || ch.c === '[')),
    tilde: chars[0]?.c === '~' && !chars[0].q && !chars[0].u,
    procSub,
    subs,
    raw,
  };
}

const MAX_BRACE_WORDS = 64;

/** `{rm,-rf,/}` → rm -rf /; `a{b,c}d` → abd acd. Sequences (`{1..3}`) stay as written. */
export function expandBraces(chars: Char[], depth: number): Char[][] {
  if (depth > 8) return [chars];
  const plain = (ch: Char | undefined, c: string) => ch !== undefined && ch.c === c && !ch.q && !ch.u && !ch.s;
  for (let open = 0; open < chars.length; open++) {
    if (!plain(chars[open], '{')) continue;
    let level = 0;
    const commas: number[] = [];
    let close = -1;
    for (let i = open; i < chars.length; i++) {
      if (plain(chars[i], '{')) level++;
      else if (plain(chars[i], '}')) {
        if (--level === 0) {
          close = i;
          break;
        }
      } else if (level === 1 && plain(chars[i], ',')) commas.push(i);
    }
    if (close < 0) return [chars];
    if (commas.length === 0) continue;
    const bounds = [open, ...commas, close];
    const prefix = chars.slice(0, open);
    const suffix = chars.slice(close + 1);
    const out: Char[][] = [];
    for (let k = 0; k + 1 < bounds.length; k++) {
      const alternative = chars.slice(bounds[k]! + 1, bounds[k + 1]!);
      for (const variant of expandBraces([...prefix, ...alternative, ...suffix], depth + 1)) {
        out.push(variant);
        if (out.length >= MAX_BRACE_WORDS) return out;
      }
    }
    return out;
  }
  return [chars];
}

/**
 * Function definitions (`name() { … }`, `function name { … }`, or a `( … )` body): each name with
 * the source of its body, which the policy checks again at every call with that call's arguments
 * (`f(){ "$@"; }; f rm -rf /`). A function that calls itself in a pipe or in the background
 * multiplies without end: a fork bomb.
 */
export function findFunctions(flat: FlatToken[], src: string): { forkBombs: string[]; functions: Map<string, string> } {
  const forkBombs: string[] = [];
  const functions = new Map<string, string>();
  for (let i = 0; i < flat.length; i++) {
    const token = flat[i]!;
    if (token.t !== 'w') continue;
    let name: string | undefined;
    let bodyStart: number | undefined;
    const isOp = (k: number, op: string) => {
      const t = flat[k];
      return t?.t === 'op' && t.op === op;
    };
    if (token.text === 'function' && !token.quoted && flat[i + 1]?.t === 'w') {
      name = (flat[i + 1] as { text: string }).text.replace(/\(\)$/, '');
      bodyStart = isOp(i + 2, '(') && isOp(i + 3, ')') ? i + 4 : i + 2;
    } else if (isOp(i + 1, '(') && isOp(i + 2, ')')) {
      name = token.text;
      bodyStart = i + 3;
    }
    if (name === undefined || bodyStart === undefined) continue;
    // Newlines between `()` and the body.
    while (isOp(bodyStart, '\n')) bodyStart++;
    // The body: a `{ … }` group (words) or a `( … )` subshell (ops); collect to its end.
    const open = flat[bodyStart];
    let end = flat.length;
    if (open?.t === 'w' && open.text === '{') {
      let level = 0;
      for (let k = bodyStart; k < flat.length; k++) {
        const t = flat[k]!;
        if (t.t === 'w' && !t.quoted && t.text === '{') level++;
        if (t.t === 'w' && !t.quoted && t.text === '}' && --level === 0) {
          end = k;
          break;
        }
      }
    } else if (open?.t === 'op' && open.op === '(') {
      let level = 0;
      for (let k = bodyStart; k < flat.length; k++) {
        if (isOp(k, '(')) level++;
        if (isOp(k, ')') && --level === 0) {
          end = k;
          break;
        }
      }
    } else continue;
    const body = flat.slice(bodyStart + 1, end);
    const bodySource = src.slice(open.end, flat[end]?.start ?? src.length);
    functions.set(name, bodySource);
    const calls = body.filter((t) => t.t === 'w' && t.text === name).length;
    const multiplies = body.some((t) => t.t === 'op' && (t.op === '|' || t.op === '&'));
    if (calls >= 1 && multiplies) forkBombs.push(name);
  }
  return { forkBombs, functions };
}
