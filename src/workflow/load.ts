// Loads a workflow module (docs/workflows.md#a-workflow-module): JavaScript, or TypeScript on a Node that strips
// types; its default (or `workflow`) export checked. Any failure is one line saying what is wrong.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseWorkflow, type Workflow } from './definition.js';

export async function loadWorkflow(file: string, cwd: string = process.cwd()): Promise<Workflow> {
  const at = path.resolve(cwd, file);
  // Said before Node's own words, which name huddle's bundle instead of the file asked for.
  if (!existsSync(at)) throw new Error(`${file}: no such file (looked for ${at})`);
  try {
    const module = (await import(pathToFileURL(at).href)) as { default?: unknown; workflow?: unknown };
    return parseWorkflow(module.default ?? module.workflow);
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message.split('\n')[0]}`);
  }
}
