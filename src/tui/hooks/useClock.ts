// One shared clock for everything that moves on screen (spinners, elapsed seconds). Its timer runs
// only while a component that shows something moving is mounted and active, so an idle team
// costs no CPU; components that are not animating read a constant and never re-render from it.
import { useSyncExternalStore } from 'react';

/** A spinner frame every this many milliseconds (8 a second: smooth enough, cheap enough). */
export const TICK_MS = 200;

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const listeners = new Set<() => void>();
let timer: NodeJS.Timeout | undefined;
let tick = 0;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  timer ??= setInterval(() => {
    tick++;
    for (const notify of listeners) notify();
  }, TICK_MS);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const still = () => () => undefined;

/** Milliseconds now, refreshed every tick while `active`; while not, a constant (no timer, no re-render). */
export function useClock(active: boolean): number {
  useSyncExternalStore(active ? subscribe : still, () => (active ? tick : -1));
  return active ? Date.now() : 0;
}

export function spinnerFrame(now: number): string {
  return SPINNER[Math.floor(now / TICK_MS) % SPINNER.length]!;
}

/** "7 s", "1 m 05 s", "2 h 03 m": how long something has been going. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} m ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} m`;
}
