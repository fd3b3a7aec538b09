// /grid: which agents get a tile (the first nine, in tab order: Alt+1…Alt+9 reach the same ones).
import type { ConsoleState } from './console-store.js';

export const MAX_TILES = 9;

export function gridAgents(state: Pick<ConsoleState, 'order'>): string[] {
  return state.order.slice(0, MAX_TILES);
}
