// Whole-file writes, for new files and complete rewrites; small changes go through edit_file so
// the model does not have to reproduce (and risk garbling) the rest of the file.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, ToolError } from './types.js';

const input = z.object({
  path: z.string().min(1).describe('The file to write, relative to the workspace root (or absolute inside it).'),
  content: z.string().describe('The complete new content of the file.'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  description:
    'Writes a file with the given content, creating missing parent directories and replacing the file if it exists. ' +
    'For changes to part of an existing file use edit_file instead.',
  input,
  summarize: (args) => args.path,
  async run(args, context) {
    const absolute = context.workspace.resolve(args.path);
    const shown = context.workspace.relative(absolute);
    const existed = await kindOf(absolute);
    if (existed === 'directory') throw new ToolError(`${shown} is a directory; give a file path`);
    await mkdir(path.dirname(absolute), { recursive: true });
    await writeFile(absolute, args.content, 'utf8');
    const bytes = Buffer.byteLength(args.content, 'utf8');
    return `${existed === 'file' ? 'overwrote' : 'created'} ${shown} (${bytes} byte${bytes === 1 ? '' : 's'})`;
  },
});

async function kindOf(absolute: string): Promise<'file' | 'directory' | 'none'> {
  try {
    return (await stat(absolute)).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'none';
  }
}
