// Targeted edits by exact text replacement. Requiring a unique match keeps the model from editing
// the wrong spot; the errors say why a match failed so that the next attempt can succeed.
import { readInside, writeInside } from '../workspace/safe-files.js';
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import * as z from 'zod';
import { capOutput } from '../process/output-cap.js';
import { looksBinary } from './read-file.js';
import { defineTool, ToolError } from './types.js';

const DIFF_MAX_CHARS = 10_000;

const input = z.object({
  path: z.string().min(1).describe('The file to edit, relative to the workspace root (or absolute inside it).'),
  old_text: z
    .string()
    // Exactness and uniqueness are the tool's description: said once, not in every request twice.
    .describe('The exact text to replace, indentation included; with enough surrounding lines to be unique.'),
  new_text: z.string().describe('The text to put in its place (empty to delete old_text).'),
});

export const editFileTool = defineTool({
  name: 'edit_file',
  effects: ['write'],
  description:
    'Replaces one exact occurrence of old_text in a file with new_text and returns a diff of the change. ' +
    'old_text must match the file exactly (whitespace included) and occur exactly once. ' +
    'Read the file first; to create a file or rewrite it whole use write_file.',
  input,
  summarize: (args) => args.path,
  async run(args, context) {
    if (args.old_text === '') {
      throw new ToolError('old_text is empty; give the exact text to replace (to create or rewrite a file use write_file)');
    }
    if (args.old_text === args.new_text) throw new ToolError('old_text and new_text are the same; nothing to change');
    const { buffer, absolute } = await readInside(context.workspace, args.path);
    const shown = context.workspace.relative(absolute);
    if (looksBinary(buffer)) throw new ToolError(`${shown} is a binary file; edit_file only edits text`);
    const before = buffer.toString('utf8');

    let oldText = args.old_text;
    let newText = args.new_text;
    let positions = occurrences(before, oldText);
    // read_file shows CRLF files without their CRs, so the model's old_text comes with bare LFs.
    if (positions.length === 0 && before.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r')) {
      const crlfOld = oldText.replace(/\n/g, '\r\n');
      const crlfPositions = occurrences(before, crlfOld);
      if (crlfPositions.length > 0) {
        oldText = crlfOld;
        newText = newText.replace(/\r?\n/g, '\r\n');
        positions = crlfPositions;
      }
    }

    if (positions.length === 0) throw new ToolError(notFoundMessage(before, args.old_text, shown));
    if (positions.length > 1) {
      const lines = [...new Set(positions.map((index) => lineAt(before, index)))];
      throw new ToolError(
        `old_text occurs ${positions.length} times in ${shown} (at lines ${lines.join(', ')}); ` +
          'include more surrounding lines in old_text so that it matches exactly once',
      );
    }

    const index = positions[0]!;
    const after = before.slice(0, index) + newText + before.slice(index + oldText.length);
    await writeInside(context.workspace, absolute, after, shown);
    return `edited ${shown}\n${capOutput(editDiff(shown, before, after), DIFF_MAX_CHARS)}`;
  },
});

/** A unified diff between two versions of a file, for the model and for the console. */
export function editDiff(displayPath: string, before: string, after: string, context = 3): string {
  return createTwoFilesPatch(displayPath, displayPath, before, after, undefined, undefined, {
    context,
    headerOptions: FILE_HEADERS_ONLY,
  }).replace(/\n$/, '');
}

/** Every start index of `needle`, overlapping ones included (they too make a match ambiguous). */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) found.push(i);
  return found;
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

function notFoundMessage(content: string, oldText: string, shown: string): string {
  const base = `old_text was not found in ${shown}`;
  const firstLine = oldText
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .find((line) => line.trim() !== '');
  if (firstLine === undefined) return `${base}; it is only whitespace, give the text around the spot to change`;

  const lines = content.split('\n').map((line) => line.replace(/\r$/, ''));
  const exact = matchingLines(lines, (line) => line.includes(firstLine));
  if (exact.length > 0) {
    return (
      `${base}; its first line occurs at line${exact.length === 1 ? '' : 's'} ${list(exact)} but the text after it differs. ` +
      'Read that part of the file again and copy old_text exactly'
    );
  }
  const wanted = squash(firstLine);
  const loose = matchingLines(lines, (line) => squash(line).includes(wanted));
  if (loose.length > 0) {
    return (
      `${base}; its first line occurs at line${loose.length === 1 ? '' : 's'} ${list(loose)} with different whitespace ` +
      '(indentation, tabs or spaces). Copy old_text exactly as the file has it (read_file output: the text after the tab)'
    );
  }
  return `${base}; read the file to see its current content and copy old_text exactly`;
}

function matchingLines(lines: string[], test: (line: string) => boolean): number[] {
  const found: number[] = [];
  lines.forEach((line, i) => {
    if (test(line)) found.push(i + 1);
  });
  return found;
}

function list(lines: number[]): string {
  return lines.length > 5 ? `${lines.slice(0, 5).join(', ')} and ${lines.length - 5} more` : lines.join(', ');
}

function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
