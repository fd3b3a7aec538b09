// A focused reader of bash command lines, for the command policy (command-policy.ts). It does not
// run anything; it finds every simple command a line would run, with its words after quote
// removal, so that a rule sees `rm` in `r''m`, `"rm"`, `\rm`, `{rm,-rf,/}`, `$(echo rm)`, `x=rm; $x`,
// `bash -c "…"` (via the policy) and inside `$(…)`, backticks, `<(…)` and here-documents.
// No npm shell parser is installed (shell-quote is not in node_modules), hence this file.
//
// What it understands: blanks, `;` `&` `&&` `||` `|` `|&` newlines, `(` `)`, comments, single and
// double quotes, `$'…'` (ANSI-C), backslashes, line continuations, `$VAR` `${VAR}` (resolved when an
// earlier plain assignment in the same line gave a literal value), `$(…)`, backticks, `$((…))`,
// `<(…)` `>(…)`, brace expansion with commas, redirections with fd numbers, here-documents and
// here-strings, and fork-bomb shaped function definitions. What it cannot know (a variable's value
// at run time, a file's content) it marks as dynamic; the policy decides what to do with that.

import { emptyWord, findFunctions, finishWord, pushText, staticOutput, type Char, type FlatToken } from './shell-words.js';

export { GIT_DIR_VAR, staticOutput } from './shell-words.js';

export type { Pipeline, Redirect, Script, SimpleCommand, Word } from './shell-ast.js';
import type { Pipeline, Redirect, Script, SimpleCommand, Word } from './shell-ast.js';

/** How deep substitutions may nest before the reader gives up (and the policy refuses). */
export const MAX_NESTING = 12;

export function parseShell(source: string, vars: Map<string, string> = new Map(), depth = 0): Script {
  return new Reader(source, 0, new Map(vars), false, depth).read().script;
}

const META = new Set([' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '<', '>']);
const ANSI_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

class Reader {
  readonly #src: string;
  #pos: number;
  readonly #vars: Map<string, string>;
  readonly #stopAtParen: boolean;
  readonly #depth: number;
  #parens = 0;
  readonly #pipelines: Pipeline[] = [];
  #pipeline: SimpleCommand[] = [];
  #command: SimpleCommand = { words: [], redirects: [], display: '' };
  #display: string[] = [];
  readonly #flat: FlatToken[] = [];
  readonly #problems: string[] = [];
  /** A redirection waiting for its target word (and, for `<<-`, that its here-document drops leading tabs). */
  #pendingTarget: Redirect | undefined;
  #pendingStrip = false;
  readonly #heredocs: Array<{ redirect: Redirect; delimiter: string; strip: boolean; expand: boolean }> = [];

  constructor(src: string, pos: number, vars: Map<string, string>, stopAtParen: boolean, depth: number) {
    this.#src = src;
    this.#pos = pos;
    this.#vars = vars;
    this.#stopAtParen = stopAtParen;
    this.#depth = depth;
  }

  read(): { script: Script; end: number } {
    const src = this.#src;
    let closed = !this.#stopAtParen;
    while (this.#pos < src.length) {
      const c = src[this.#pos]!;
      const next = src[this.#pos + 1];
      if (c === ' ' || c === '\t' || c === '\r') {
        this.#pos++;
      } else if (c === '\\' && next === '\n') {
        this.#pos += 2;
      } else if (c === '\n') {
        this.#op('\n');
        this.#readHeredocs();
      } else if (c === '#') {
        while (this.#pos < src.length && src[this.#pos] !== '\n') this.#pos++;
      } else if (c === ')') {
        if (this.#stopAtParen && this.#parens === 0) {
          this.#pos++;
          closed = true;
          break;
        }
        this.#parens--;
        this.#op(')');
      } else if (c === '(') {
        this.#parens++;
        this.#op('(');
      } else if ((c === '<' || c === '>') && next === '(') {
        this.#word();
      } else if (c === '<' || c === '>') {
        this.#redirect(undefined);
      } else if (c === '&') {
        if (next === '&') this.#op('&&', 2);
        else if (next === '>') this.#redirect(undefined);
        else this.#op('&');
      } else if (c === '|') {
        if (next === '|') this.#op('||', 2);
        else if (next === '&') this.#op('|', 2);
        else this.#op('|');
      } else if (c === ';') {
        this.#op(';', next === ';' || next === '&' ? 2 : 1);
      } else {
        this.#word();
      }
    }
    if (!closed) this.#problems.push('a $( … ) is not closed');
    if (this.#pendingTarget) this.#problems.push(`'${this.#pendingTarget.op}' has no target`);
    this.#endCommand();
    this.#endPipeline();
    const { forkBombs, functions } = findFunctions(this.#flat, this.#src);
    return { script: { pipelines: this.#pipelines, forkBombs, functions, problems: this.#problems }, end: this.#pos };
  }

  // ---- structure ------------------------------------------------------------------------------

  #op(op: string, length = 1): void {
    const start = this.#pos;
    this.#pos += length;
    if (this.#pendingTarget) {
      // `echo > ; rm …`: bash refuses the line; the next word must not be taken for a file name.
      this.#problems.push(`'${this.#pendingTarget.op}' has no target`);
      this.#pendingTarget = undefined;
    }
    this.#flat.push({ t: 'op', op, start, end: this.#pos });
    this.#endCommand();
    if (op !== '|') this.#endPipeline();
  }

  #endCommand(): void {
    const command = this.#command;
    if (command.words.length || command.redirects.length) {
      command.display = this.#display.join(' ');
      this.#pipeline.push(command);
      this.#noteAssignments(command.words);
    }
    this.#command = { words: [], redirects: [], display: '' };
    this.#display = [];
  }

  #endPipeline(): void {
    if (this.#pipeline.length) this.#pipelines.push({ commands: this.#pipeline });
    this.#pipeline = [];
  }

  /** Plain assignments (`x=rm`, `export x=rm`) give later words of the same line their values. */
  #noteAssignments(words: Word[]): void {
    const first = words[0];
    if (!first) return;
    const declares = !first.quoted && ['export', 'declare', 'typeset', 'local', 'readonly'].includes(first.text);
    if (!declares && !words.every((w) => w.assignment)) {
      if (!first.quoted && (first.text === 'unset' || first.text === 'read')) for (const w of words.slice(1)) this.#vars.delete(w.text);
      return;
    }
    for (const word of declares ? words.slice(1) : words) {
      if (!word.assignment) continue;
      if (word.assignment.dynamic) this.#vars.delete(word.assignment.name);
      else this.#vars.set(word.assignment.name, word.assignment.value);
    }
  }

  #redirect(fd: string | undefined): void {
    const src = this.#src;
    const ops = ['&>>', '&>', '<<<', '<<-', '<<', '<>', '<&', '>>', '>&', '>|', '<', '>'];
    const op = ops.find((candidate) => src.startsWith(candidate, this.#pos))!;
    this.#pos += op.length;
    const redirect: Redirect = { op: op === '<<-' ? '<<' : op, ...(fd !== undefined ? { fd } : {}) };
    this.#command.redirects.push(redirect);
    this.#display.push(`${fd ?? ''}${op}`);
    this.#flat.push({ t: 'op', op: 'redir', start: this.#pos, end: this.#pos });
    this.#pendingTarget = redirect;
    this.#pendingStrip = op === '<<-';
  }

  #readHeredocs(): void {
    const src = this.#src;
    for (const pending of this.#heredocs.splice(0)) {
      let body = '';
      let found = false;
      while (this.#pos < src.length) {
        const end = src.indexOf('\n', this.#pos);
        const line = src.slice(this.#pos, end < 0 ? src.length : end);
        this.#pos = end < 0 ? src.length : end + 1;
        const compared = pending.strip ? line.replace(/^\t+/, '') : line;
        if (compared === pending.delimiter) {
          found = true;
          break;
        }
        body += `${pending.strip ? compared : line}\n`;
      }
      if (!found) this.#problems.push(`the here-document ending '${pending.delimiter}' is not closed`);
      const subs: Script[] = [];
      if (pending.expand && /[$`]/.test(body)) {
        const inner = new Reader(body, 0, this.#vars, false, this.#depth + 1);
        const chars: Char[] = [];
        inner.#readDoubleBody(chars, subs, undefined);
        body = chars.map((ch) => ch.c).join('');
      }
      pending.redirect.heredoc = { body, subs };
    }
  }

  // ---- words ----------------------------------------------------------------------------------

  #word(): void {
    const src = this.#src;
    const start = this.#pos;
    const chars: Char[] = [];
    const subs: Script[] = [];
    let quotedAny = false;
    let procSub = false;
    while (this.#pos < src.length) {
      const c = src[this.#pos]!;
      const next = src[this.#pos + 1];
      if (META.has(c)) {
        if ((c === '<' || c === '>') && next === '(' && this.#pos === start) {
          const nested = this.#nested(this.#pos + 2);
          subs.push(nested);
          chars.push({ c: '/dev/fd/63', q: false, u: true });
          procSub = true;
          continue;
        }
        // Digits right before a redirection are its file descriptor: `2>&1`.
        if ((c === '<' || c === '>') && next !== '(' && chars.length > 0 && !quotedAny && chars.every((ch) => /[0-9]/.test(ch.c) && !ch.q)) {
          this.#redirect(chars.map((ch) => ch.c).join(''));
          return;
        }
        break;
      }
      if (c === '\\') {
        if (next === '\n') this.#pos += 2;
        else if (next === undefined) this.#pos++;
        else {
          chars.push({ c: next, q: true });
          quotedAny = true;
          this.#pos += 2;
        }
      } else if (c === "'") {
        quotedAny = true;
        const end = src.indexOf("'", this.#pos + 1);
        const text = src.slice(this.#pos + 1, end < 0 ? src.length : end);
        if (end < 0) this.#problems.push('a single quote is not closed');
        for (const ch of text) chars.push({ c: ch, q: true });
        this.#pos = end < 0 ? src.length : end + 1;
      } else if (c === '"') {
        quotedAny = true;
        this.#pos++;
        this.#readDoubleBody(chars, subs, '"');
      } else if (c === '$') {
        if (next === "'" || next === '"') quotedAny = true;
        this.#dollar(chars, subs, false);
      } else if (c === '`') {
        this.#backtick(chars, subs, false);
      } else {
        chars.push({ c, q: false });
        this.#pos++;
      }
    }
    const raw = src.slice(start, this.#pos);
    const words = finishWord(chars, raw, subs, quotedAny, procSub, this.#vars.get('IFS'));
    this.#flat.push({ t: 'w', text: words.map((w) => w.text).join(' '), quoted: quotedAny, start, end: this.#pos });
    const target = this.#pendingTarget;
    if (target) {
      this.#pendingTarget = undefined;
      const word = words[0] ?? emptyWord(raw, subs);
      target.target = word;
      this.#display.push(raw);
      if (target.op === '<<') this.#heredocs.push({ redirect: target, delimiter: word.text, strip: this.#pendingStrip, expand: !quotedAny });
      return;
    }
    this.#display.push(raw);
    this.#command.words.push(...words);
  }

  /** After an opening `"` (or for a here-document body: to the end); the closing quote is consumed. */
  #readDoubleBody(chars: Char[], subs: Script[], terminator: '"' | undefined): void {
    const src = this.#src;
    while (this.#pos < src.length) {
      const c = src[this.#pos]!;
      const next = src[this.#pos + 1];
      if (c === terminator) {
        this.#pos++;
        return;
      }
      if (c === '\\' && next !== undefined && (next === '$' || next === '`' || next === '"' || next === '\\' || next === '\n')) {
        if (next !== '\n') chars.push({ c: next, q: true });
        this.#pos += 2;
      } else if (c === '$') {
        this.#dollar(chars, subs, true);
      } else if (c === '`') {
        this.#backtick(chars, subs, true);
      } else {
        chars.push({ c, q: true });
        this.#pos++;
      }
    }
    if (terminator) this.#problems.push('a double quote is not closed');
  }

  #dollar(chars: Char[], subs: Script[], inDouble: boolean): void {
    const src = this.#src;
    const start = this.#pos;
    const next = src[this.#pos + 1];
    if (next === "'" && !inDouble) {
      this.#pos += 2;
      this.#ansiC(chars);
      return;
    }
    if (next === '"' && !inDouble) {
      this.#pos += 2;
      this.#readDoubleBody(chars, subs, '"');
      return;
    }
    if (next === '(' && src[this.#pos + 2] === '(') {
      // Arithmetic: skip to the matching `))`.
      let depth = 0;
      let i = this.#pos + 1;
      for (; i < src.length; i++) {
        if (src[i] === '(') depth++;
        else if (src[i] === ')' && --depth === 0) break;
      }
      this.#pos = Math.min(src.length, i + 1);
      // `$(( $(cmd) ))` still runs cmd.
      const inner = src.slice(start + 3, Math.max(start + 3, i - 1));
      if (/[$`]/.test(inner)) new Reader(inner, 0, this.#vars, false, this.#depth + 1).#readDoubleBody([], subs, undefined);
      chars.push({ c: src.slice(start, this.#pos), q: inDouble, u: true });
      return;
    }
    if (next === '(') {
      const script = this.#nested(this.#pos + 2);
      subs.push(script);
      this.#pushOutput(chars, script, src.slice(start, this.#pos), inDouble);
      return;
    }
    if (next === '{') {
      let depth = 0;
      let i = this.#pos + 1;
      const innerSubs: Script[] = [];
      for (; i < src.length; i++) {
        const ch = src[i];
        if (ch === '\\') i++;
        else if (ch === "'" && !inDouble) {
          const close = src.indexOf("'", i + 1);
          i = close < 0 ? src.length : close;
        } else if (ch === '$' && src[i + 1] === '(' && src[i + 2] !== '(') {
          const nested = new Reader(src, i + 2, new Map(this.#vars), true, this.#depth + 1).read();
          innerSubs.push(nested.script);
          i = nested.end - 1;
        } else if (ch === '{') depth++;
        else if (ch === '}' && --depth === 0) break;
      }
      this.#pos = Math.min(src.length, i + 1);
      subs.push(...innerSubs);
      const inner = src.slice(start + 2, i);
      const value = /^[A-Za-z_][A-Za-z0-9_]*$/.test(inner) ? this.#vars.get(inner) : undefined;
      if (value !== undefined) pushText(chars, value, inDouble);
      else chars.push({ c: src.slice(start, this.#pos), q: inDouble, u: true });
      return;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(this.#pos + 1))?.[0];
    if (name) {
      this.#pos += 1 + name.length;
      const value = this.#vars.get(name);
      if (value !== undefined) pushText(chars, value, inDouble);
      else chars.push({ c: `$${name}`, q: inDouble, u: true });
      return;
    }
    if (next !== undefined && /[0-9@*#?$!-]/.test(next)) {
      this.#pos += 2;
      chars.push({ c: `$${next}`, q: inDouble, u: true });
      return;
    }
    chars.push({ c: '$', q: inDouble });
    this.#pos++;
  }

  #ansiC(chars: Char[]): void {
    const src = this.#src;
    while (this.#pos < src.length && src[this.#pos] !== "'") {
      const c = src[this.#pos]!;
      if (c !== '\\') {
        chars.push({ c, q: true });
        this.#pos++;
        continue;
      }
      const e = src[this.#pos + 1] ?? '';
      let match: RegExpExecArray | null;
      if (ANSI_ESCAPES[e] !== undefined) {
        chars.push({ c: ANSI_ESCAPES[e]!, q: true });
        this.#pos += 2;
      } else if ((match = /^x([0-9a-fA-F]{1,2})/.exec(src.slice(this.#pos + 1)))) {
        chars.push({ c: String.fromCharCode(parseInt(match[1]!, 16)), q: true });
        this.#pos += 1 + match[0].length;
      } else if ((match = /^[uU]([0-9a-fA-F]{1,8})/.exec(src.slice(this.#pos + 1)))) {
        chars.push({ c: String.fromCodePoint(Math.min(0x10ffff, parseInt(match[1]!, 16))), q: true });
        this.#pos += 1 + match[0].length;
      } else if ((match = /^[0-7]{1,3}/.exec(src.slice(this.#pos + 1)))) {
        chars.push({ c: String.fromCharCode(parseInt(match[0], 8) & 0xff), q: true });
        this.#pos += 1 + match[0].length;
      } else {
        chars.push({ c: `\\${e}`, q: true });
        this.#pos += 2;
      }
    }
    if (this.#pos >= src.length) this.#problems.push("a $'…' quote is not closed");
    this.#pos++;
  }

  #backtick(chars: Char[], subs: Script[], inDouble: boolean): void {
    const src = this.#src;
    const start = this.#pos;
    let i = this.#pos + 1;
    let inner = '';
    for (; i < src.length && src[i] !== '`'; i++) {
      if (src[i] === '\\' && i + 1 < src.length && '\\`$'.includes(src[i + 1]!)) inner += src[++i];
      else inner += src[i];
    }
    if (i >= src.length) this.#problems.push('a backquote is not closed');
    this.#pos = Math.min(src.length, i + 1);
    const script = this.#depth >= MAX_NESTING ? tooDeep() : parseShell(inner, this.#vars, this.#depth + 1);
    subs.push(script);
    this.#pushOutput(chars, script, src.slice(start, this.#pos), inDouble);
  }

  /** A `$(…)` or `<(…)` body from `start`; leaves the position after its `)`. */
  #nested(start: number): Script {
    if (this.#depth >= MAX_NESTING) {
      this.#pos = this.#src.length;
      return tooDeep();
    }
    const { script, end } = new Reader(this.#src, start, new Map(this.#vars), true, this.#depth + 1).read();
    this.#pos = end;
    this.#problems.push(...script.problems.filter((p) => p.startsWith('a $( … )')));
    return script;
  }

  #pushOutput(chars: Char[], script: Script, source: string, inDouble: boolean): void {
    const only = script.pipelines.length === 1 && script.pipelines[0]!.commands.length === 1 ? script.pipelines[0]!.commands[0]! : undefined;
    const output = only ? staticOutput(only, this.#vars) : undefined;
    if (output !== undefined) pushText(chars, output.replace(/\n+$/, ''), inDouble);
    else chars.push({ c: source, q: inDouble, u: true });
  }
}

function tooDeep(): Script {
  return { pipelines: [], forkBombs: [], functions: new Map(), problems: [`substitutions nest more than ${MAX_NESTING} deep`] };
}
