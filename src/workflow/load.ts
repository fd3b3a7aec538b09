// Loads a workflow module (docs/workflows.md#a-workflow-module): JavaScript, or TypeScript on a Node that strips
// types; its default (or `workflow`) export checked. Any failure is one line saying what is wrong.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseWorkflow, type Workflow } from './definition.js';

export async function loadWorkflow(file: string, cwd: string = process.cwd()): Promise<Workflow> {
  try {
    const module = (await import(pathToFileURL(path.resolve(cwd, file)).href)) as { default?: unknown; workflow?: unknown };
    return parseWorkflow(module.default ?? module.workflow);
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message.split('\n')[0]}`);
  }
}
