// The file and shell tools every agent gets (docs/contract.md#tools), in the order docs/contract.md#every-agent lists them
// so that the model always sees the same tool list.
import { bashTool } from './bash.js';
import { editFileTool } from './edit-file.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { readFileTool } from './read-file.js';
import type { Tool } from './types.js';
import { writeFileTool } from './write-file.js';

export function coreTools(): Tool[] {
  return [bashTool, readFileTool, writeFileTool, editFileTool, globTool, grepTool];
}
