// How a status looks, everywhere in the console.
import chalk from 'chalk';
import type { AgentStatus } from '../state/console-store.js';
import { DEFAULT_CONTEXT_WINDOW, contextWindowFor } from '../../runtime/model/context-window.js';

export const STATUS_GLYPH: Record<AgentStatus, string> = {
  working: '●',
  idle: '○',
  waiting: '◐',
  shutdown: '■',
  failed: '✗',
};

export const STATUS_COLOR: Record<AgentStatus, string> = {
  working: 'green',
  idle: 'gray',
  waiting: 'yellow',
  shutdown: 'gray',
  failed: 'red',
};

/** The status glyph in its colour, as a styled string (for lines built outside <Text> props). */
export function statusMark(status: AgentStatus): string {
  const paint = { green: chalk.green, gray: chalk.gray, yellow: chalk.yellow, red: chalk.red }[STATUS_COLOR[status]] ?? chalk.white;
  return paint(STATUS_GLYPH[status]);
}

/** Context window assumed for the percentage shown when the model is not known (the API reports tokens used, not the limit). */
export const CONTEXT_WINDOW_TOKENS = DEFAULT_CONTEXT_WINDOW;

/** How full an agent's context is, in percent of its model's window. */
export function contextPercent(contextTokens: number, model: string | undefined): number {
  return Math.round((contextTokens / contextWindowFor(model)) * 100);
}

export function formatAgo(timestamp: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - timestamp) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  return `${Math.floor(seconds / 3600)}h ago`;
}
