// Reading files for the model: numbered lines so it can cite and edit them, and a page at a time
// so a large file cannot flood its context.
import { open, stat } from 'node:fs/promises';
import { readInside } from '../workspace/safe-files.js';
import type { Stats } from 'node:fs';
import * as z from 'zod';
import { defineTool, ToolError } from './types.js';

export const DEFAULT_READ_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
const BINARY_SNIFF_BYTES = 8192;

const input = z.object({
  path: z.string().min(1).describe('The file to read, relative to the workspace root (or absolute inside it).'),
  offset: z.number().int().min(1).optional().describe('The line number to start at, 1-based (default 1).'),
  limit: z.number().int().min(1).optional().describe(`How many lines to return (default ${DEFAULT_READ_LIMIT}).`),
});

export const readFileTool = defineTool({
  name: 'read_file',
  effects: ['read'],
  description:
    'Reads a text file and returns its lines numbered like `cat -n` (line number, tab, text). ' +
    `Returns at most ${DEFAULT_READ_LIMIT} lines unless limit says otherwise; use offset to read further. ` +
    `Lines longer than ${MAX_LINE_CHARS} characters are cut. Refuses directories and binary files.`,
  input,
  summarize: (args) => args.path,
  async run(args, context) {
    // Opened without following a link in the last step, then checked where it really is (safe-files.ts).
    const { buffer, absolute } = await readInside(context.workspace, args.path);
    const shown = context.workspace.relative(absolute);
    if (looksBinary(buffer)) throw new ToolError(`${shown} is a binary file; read_file only reads text`);
    if (buffer.length === 0) return `${shown} is empty (0 bytes)`;

    const lines = splitLines(buffer.toString('utf8'));
    const offset = args.offset ?? 1;
    const limit = args.limit ?? DEFAULT_READ_LIMIT;
    if (offset > lines.length) {
      throw new ToolError(`offset ${offset} is past the end of ${shown}, which has ${lines.length} line${lines.length === 1 ? '' : 's'}`);
    }
    const last = Math.min(lines.length, offset + limit - 1);
    const width = Math.max(6, String(last).length);
    const out: string[] = [];
    for (let number = offset; number <= last; number++) {
      let line = lines[number - 1]!;
      if (line.length > MAX_LINE_CHARS) {
        line = `${line.slice(0, MAX_LINE_CHARS)}… [line cut, ${line.length} characters]`;
      }
      out.push(`${String(number).padStart(width)}\t${line}`);
    }
    if (offset > 1 || last < lines.length) {
      const more = last < lines.length ? `; call again with offset ${last + 1} to read more` : '';
      out.push(`[lines ${offset}-${last} of ${lines.length}${more}]`);
    }
    return out.join('\n');
  },
});

/** The lines of a text, without the empty "line" after a final newline and without CRs of CRLF. */
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Text files have no NUL bytes; checking the start is enough in practice and cheap. */
export function looksBinary(start: Uint8Array): boolean {
  return start.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** Reads only the start of a file, to sniff it before reading the rest. */
export async function fileLooksBinary(absolute: string): Promise<boolean> {
  const handle = await open(absolute, 'r');
  try {
    const buffer = new Uint8Array(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return looksBinary(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** Stats a path that must be an existing regular file, with errors that tell the model what to do. */
export async function statRegularFile(absolute: string, shown: string): Promise<Stats> {
  let info: Stats;
  try {
    info = await stat(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ToolError(`file not found: ${shown}; use glob to find the right path`);
    }
    throw error;
  }
  if (info.isDirectory()) throw new ToolError(`${shown} is a directory; use glob to list its files`);
  if (!info.isFile()) throw new ToolError(`${shown} is not a regular file`);
  return info;
}
