// A teammate's completion carries its result to the lead (docs/contract.md#messages): huddle follows the
// team's events and, when a teammate that completed tasks next sends the lead a message (its report), adds
// `tasks` to it: per task its id, subject and status, the files the teammate wrote (write_file, edit_file)
// since its previous completion, the verify outcome and the task's `result`. The lead reads what happened
// without asking the board (task_get) or the teammate again.
import type { EventHub, HuddleEvent } from '../../runtime/events/events.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';

export interface TaskResultNote {
  id: number;
  subject: string;
  /** completed, or review for a task that requires one. */
  status: string;
  files: string[];
  /** One line: `verify passed: npm test (exit 0, 1.2 s)`; absent when no verify command ran. */
  verify?: string;
  /** The task's `result` (what it produced), cut short. */
  result?: string;
}

const FILE_TOOLS = new Set(['write_file', 'edit_file']);
const FILES_LISTED = 20;
const RESULT_CHARS = 300;

/** A task event in which its owner finished it (completed, or sent to review); a reviewer's approval is not the owner's report. */
export function isOwnersFinish(event: HuddleEvent): event is Extract<HuddleEvent, { type: 'task' }> {
  return event.type === 'task' && (event.action === 'completed' || event.action === 'review_requested') && event.task.owner === event.agent;
}

export class CompletionReports {
  /** Files each agent wrote since its previous completion. */
  readonly #files = new Map<string, Set<string>>();
  /** `agent:task` → the last verify outcome of that agent's update of that task. */
  readonly #verify = new Map<string, string>();
  /** Completions not yet carried by a report to the lead. */
  readonly #pending = new Map<string, TaskResultNote[]>();

  constructor(hub: EventHub) {
    hub.subscribe((event) => this.#observe(event));
  }

  #observe(event: HuddleEvent): void {
    const agent = event.agent;
    if (event.type === 'tool_call' && event.subagent === undefined && FILE_TOOLS.has(event.name)) {
      const file = (event.input as { path?: unknown } | null)?.path;
      if (typeof file !== 'string') return;
      const files = this.#files.get(agent) ?? new Set<string>();
      files.add(file);
      this.#files.set(agent, files);
    } else if (event.type === 'verify') {
      this.#verify.set(`${agent}:${event.task_id}`, event.summary);
    } else if (isOwnersFinish(event)) {
      const { task } = event;
      const files = [...(this.#files.get(agent) ?? [])];
      this.#files.delete(agent);
      const verify = this.#verify.get(`${agent}:${task.id}`);
      this.#verify.delete(`${agent}:${task.id}`);
      const result = typeof task.result === 'string' && task.result.trim() ? cut(task.result.trim(), RESULT_CHARS) : undefined;
      const note: TaskResultNote = {
        id: task.id,
        subject: task.subject,
        status: task.status,
        files: files.length > FILES_LISTED ? [...files.slice(0, FILES_LISTED), `and ${files.length - FILES_LISTED} more`] : files,
        ...(verify ? { verify } : {}),
        ...(result ? { result } : {}),
      };
      this.#pending.set(agent, [...(this.#pending.get(agent) ?? []), note]);
    }
  }

  /**
   * What huddle adds to a message from `from` to `to`: the results not yet reported, when it is a report to the
   * lead. They stay pending until `sent` says the message was stored: a report whose send failed leaves them
   * for the next one.
   */
  readonly annotate = (from: string, to: string): { fields: Record<string, unknown>; sent: () => void } | undefined => {
    if (to !== LEAD_NAME || from === LEAD_NAME) return undefined;
    const carried = [...(this.#pending.get(from) ?? [])];
    if (!carried.length) return undefined;
    const sent = () => {
      // Completions that came while it was sent wait for the next report.
      const left = (this.#pending.get(from) ?? []).filter((note) => !carried.includes(note));
      if (left.length) this.#pending.set(from, left);
      else this.#pending.delete(from);
    };
    return { fields: { tasks: carried }, sent };
  };
}

const byHub = new WeakMap<EventHub, CompletionReports>();

/** The team's one tracker (every agent's tools of a process share its hub). */
export function completionReportsFor(hub: EventHub): CompletionReports {
  let reports = byHub.get(hub);
  if (!reports) {
    reports = new CompletionReports(hub);
    byHub.set(hub, reports);
  }
  return reports;
}

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
