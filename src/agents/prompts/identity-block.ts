// The block that restarts an agent's context (docs/contract.md#injected-turns): after a compaction (and, in the
// same form, on resume) the first user turn starts with who the agent is, then the open tasks it
// owns, one line each, so it never loses track of either whatever else was summarised away.
import { identityLine, type Identity } from './prompts.js';

export interface OwnedTask {
  id: number;
  subject: string;
}

/**
 * `<identity>You are '<name>', role: <role>, team: <team>. <note></identity>` and then one
 * `Task #<id>: <subject>` line per task (or a line saying there are none).
 */
export function identityBlock(identity: Identity, note: string, tasks: OwnedTask[]): string {
  const lines = tasks.length ? tasks.map(taskLine) : ['(you own no open tasks)'];
  return [`<identity>${identityLine(identity)}${note ? ` ${note}` : ''}</identity>`, ...lines].join('\n');
}

export function taskLine(task: OwnedTask): string {
  // A subject is one line on the board; a stray newline must not split the list.
  return `Task #${task.id}: ${task.subject.replace(/\s*\n\s*/g, ' ')}`;
}
