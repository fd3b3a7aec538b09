// The block that restarts an agent's context (docs/contract.md#injected-turns): after a compaction (and, in the
// same form, on resume) the first user turn starts with who the agent is, then the open tasks it
// owns, one line each, so it never loses track of either whatever else was summarised away.
import { identityLine, type Identity } from './prompts.js';
import { fill } from './templates.js';

export interface OwnedTask {
  id: number;
  subject: string;
}

/**
 * `<identity>You are '<name>', role: <role>, team: <team>. <note></identity>` and then one
 * `Task #<id>: <subject>` line per task (or a line saying there are none).
 */
export function identityBlock(identity: Identity, note: string, tasks: OwnedTask[]): string {
  return `<identity>${identityLine(identity)}${note ? ` ${note}` : ''}</identity>\n${ownedTaskLines(tasks)}`;
}

/** The `{{tasks}}` of the turns that restart a context (turn-compacted.md, turn-restarted.md, turn-resumed.md). */
export function ownedTaskLines(tasks: OwnedTask[]): string {
  return tasks.length ? tasks.map(taskLine).join('\n') : '(you own no open tasks)';
}

export function taskLine(task: OwnedTask): string {
  // A subject is one line on the board; a stray newline must not split the list.
  return `Task #${task.id}: ${task.subject.replace(/\s*\n\s*/g, ' ')}`;
}

/** The first turn after a compaction (turn-compacted.md); `midTurn`: the model answers it next with no new input. */
export function compactedTurn(identity: Identity, transcriptFile: string, tasks: OwnedTask[], summary: string, midTurn: boolean): string {
  return fill('turn-compacted', { identity: identityLine(identity), transcriptFile, tasks: ownedTaskLines(tasks), summary, midTurn });
}

/** The first turn after `/restart` (turn-restarted.md); `summary` empty when there was nothing to summarise. */
export function restartedTurn(identity: Identity, tasks: OwnedTask[], summary: string): string {
  return fill('turn-restarted', { identity: identityLine(identity), tasks: ownedTaskLines(tasks), summary });
}
