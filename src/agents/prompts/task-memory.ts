// A teammate's short memory of its earlier tasks, for the fresh context it starts each new task
// from (docs/contract.md#injected-turns): per task what it was, what the teammate said last and
// the files it wrote. Bounded (the last few tasks, each cut short), so the input of a task does
// not grow with the tasks done before it.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';

export interface TaskMemoryEntry {
  /** "#3 Write the parser", or "your first assignment" for the spawn prompt's work. */
  what: string;
  /** Its last words on it, cut short. */
  outcome: string;
  files: string[];
}

export const TASK_MEMORY_ENTRIES = 5;
const OUTCOME_CHARS = 300;
const ASSIGNMENT_CHARS = 1_500;
const FILES_LISTED = 12;
const FILE_TOOLS = new Set(['write_file', 'edit_file']);

/** What one stretch of work left in the transcript: the files written, and the last thing said. */
export function rememberWork(what: string, messages: MessageParam[]): TaskMemoryEntry {
  const files = new Set<string>();
  let outcome = '';
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use' && FILE_TOOLS.has(block.name)) {
        const file = (block.input as { path?: unknown } | null)?.path;
        if (typeof file === 'string') files.add(file);
      } else if (block.type === 'text' && block.text.trim()) outcome = block.text.trim();
    }
  }
  return { what, outcome: cut(outcome, OUTCOME_CHARS), files: [...files] };
}

/**
 * The first turn of a task's fresh context: the task's own turn (its first line as always), then
 * the assignment the teammate was spawned with and its memory of earlier tasks.
 */
export function freshTaskTurn(assignment: string, memory: TaskMemoryEntry[], taskTurn: string): string {
  const lines = [taskTurn, '<fresh-context>This task starts from a fresh context: your earlier conversation is not in it.'];
  if (assignment.trim()) lines.push(`You were spawned with: ${cut(assignment.trim(), ASSIGNMENT_CHARS)}`);
  if (memory.length) {
    lines.push('What you did before (your memory of earlier tasks):');
    for (const entry of memory.slice(-TASK_MEMORY_ENTRIES)) {
      const files = entry.files.length
        ? ` Files: ${entry.files.slice(0, FILES_LISTED).join(', ')}${entry.files.length > FILES_LISTED ? ` and ${entry.files.length - FILES_LISTED} more` : ''}.`
        : '';
      lines.push(`- ${entry.what}: ${entry.outcome || '(nothing said)'}${files}`);
    }
  }
  lines.push('</fresh-context>');
  return lines.join('\n');
}

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
