// The person edits a text (a plan waiting in the needs-you queue) in their own editor ($VISUAL, $EDITOR, else vi):
// the console hands the terminal over (leaves the alternate screen, mouse and bracketed paste off, cooked mode),
// waits for the editor, and takes the terminal back; the caller then has the console redraw whole. The text goes
// through a file in a private temporary directory (0700), removed afterwards.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LEAVE = '\x1b[?1000l\x1b[?1006l\x1b[?2004l\x1b[?25h\x1b[?1049l';
const ENTER = '\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J';
const MOUSE_ON = '\x1b[?1000h\x1b[?1006h';

export type EditorResult = { kind: 'edited'; text: string } | { kind: 'unchanged' } | { kind: 'failed'; message: string };

export function editInTerminal(text: string, options: { mouse: boolean; env?: NodeJS.ProcessEnv }): EditorResult {
  const env = options.env ?? process.env;
  const editor = env.VISUAL?.trim() || env.EDITOR?.trim() || 'vi';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-edit-'));
  const file = path.join(dir, 'plan.md');
  const stdin = process.stdin;
  const raw = stdin.isTTY ? stdin.isRaw : false;
  try {
    writeFileSync(file, text, { mode: 0o600 });
    process.stdout.write(LEAVE);
    if (stdin.isTTY) stdin.setRawMode(false);
    // $EDITOR may carry its own arguments ("code -w"): the shell splits them; the file is passed apart, unquoted by nobody.
    const run = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'huddle-editor', file], { stdio: 'inherit', env });
    if (run.error) return { kind: 'failed', message: `the editor '${editor}' could not start (${run.error.message})` };
    if (run.status !== 0) return { kind: 'failed', message: `the editor '${editor}' exited with ${run.status ?? run.signal}; the plan is unchanged` };
    const edited = readFileSync(file, 'utf8');
    if (!edited.trim()) return { kind: 'failed', message: 'the edited plan is empty; the plan is unchanged' };
    return edited === text ? { kind: 'unchanged' } : { kind: 'edited', text: edited };
  } finally {
    if (stdin.isTTY) stdin.setRawMode(raw);
    process.stdout.write(ENTER + '\x1b[?2004h' + (options.mouse ? MOUSE_ON : ''));
    rmSync(dir, { recursive: true, force: true });
  }
}
