// Whole-file writes, for new files and complete rewrites; small changes go through edit_file so
// the model does not have to reproduce (and risk garbling) the rest of the file.
import * as z from 'zod';
import { writeInside } from '../workspace/safe-files.js';
import { defineTool } from './types.js';

const input = z.object({
  path: z.string().min(1).describe('The file to write, relative to the workspace root (or absolute inside it).'),
  content: z.string().describe('The complete new content of the file.'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  effects: ['write'],
  description:
    'Writes a file with the given content, creating missing parent directories and replacing the file if it exists. ' +
    'For changes to part of an existing file use edit_file instead.',
  input,
  summarize: (args) => args.path,
  async run(args, context) {
    // A new file renamed into place: atomic, and never through a swapped directory or a hard link (safe-files.ts).
    const { absolute, existed } = await writeInside(context.workspace, args.path, args.content);
    const shown = context.workspace.relative(absolute);
    // Lines as an editor counts them (a last line without its newline counts too): the pane says `wrote N lines`.
    // No byte count: the model wrote the content, and the result rides along in every later request.
    const lines = args.content === '' ? 0 : args.content.replace(/\n$/, '').split('\n').length;
    return `${existed ? 'overwrote' : 'created'} ${shown} (${lines} line${lines === 1 ? '' : 's'})`;
  },
});
