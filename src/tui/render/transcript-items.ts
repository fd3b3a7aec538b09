// What a pane shows: an agent's transcript as display items. Items are immutable; a finished
// item keeps its identity forever, so its rendered lines can be cached per width.
import type { InboxMessageView } from './human-words.js';

export type TranscriptItem =
  /** A user turn that entered the agent's context; `by` is who caused it when not the lead (the person: 'user'). */
  | { kind: 'prompt'; id: number; text: string; source: string; by?: string | undefined }
  /** Messages delivered to the agent `to` (the pane's agent). */
  | { kind: 'inbox'; id: number; to?: string | undefined; messages: InboxMessageView[] }
  | { kind: 'assistant'; id: number; text: string; streaming: boolean }
  | {
      kind: 'tool';
      id: number;
      toolUseId: string;
      name: string;
      summary: string;
      /** An explore call's helpers and what each does last, by subagent id (docs/contract.md#subagents). */
      helpers?: Record<string, string>;
      state: 'running' | 'ok' | 'error';
      durationMs?: number;
      /** Time the call spent waiting for the person's approval (not the tool's own time), and since when it waits now. */
      waitedMs?: number;
      waitingSince?: number;
      result?: string;
    }
  | { kind: 'notice'; id: number; text: string; tone: 'info' | 'warn' | 'error' }
  /** A unified diff shown in full (a teammate's worktree against its base: /diff). */
  | { kind: 'diff'; id: number; title: string; diff: string };

let nextId = 1;
export function itemId(): number {
  return nextId++;
}

/** Keeps a transcript from growing without bound in memory; the full record stays in the log. */
export const MAX_ITEMS_PER_PANE = 2_000;

export function appendItem(items: TranscriptItem[], item: TranscriptItem): TranscriptItem[] {
  const next = items.length >= MAX_ITEMS_PER_PANE ? items.slice(items.length - MAX_ITEMS_PER_PANE + 1) : items.slice();
  next.push(item);
  return next;
}

/**
 * `item` just before the tool call that is still running (the last one), else at the end: what was
 * asked and answered about a call reads before the call's own line, which ends with its result.
 */
export function insertBeforeRunningTool(items: TranscriptItem[], item: TranscriptItem): TranscriptItem[] {
  const index = items.findLastIndex((candidate) => candidate.kind === 'tool' && candidate.state === 'running');
  if (index < 0) return appendItem(items, item);
  const next = appendItem(items, item);
  // appendItem may have cut the oldest items: find the call again in what it returned.
  const at = next.findLastIndex((candidate) => candidate.kind === 'tool' && candidate.state === 'running');
  next.splice(next.length - 1, 1);
  next.splice(at, 0, item);
  return next;
}

/** Replaces the last item matching `match` (searching from the end, where the live items are). */
export function replaceLast(
  items: TranscriptItem[],
  match: (item: TranscriptItem) => boolean,
  update: (item: TranscriptItem) => TranscriptItem,
): TranscriptItem[] {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!;
    if (match(item)) {
      const next = items.slice();
      next[index] = update(item);
      return next;
    }
  }
  return items;
}
