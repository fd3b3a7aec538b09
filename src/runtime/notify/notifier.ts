// Tells the person that something needs them (an approval, a plan, a budget stop, a failure) or
// that the team is done: the bell and a desktop notification through the terminal, as the
// notification settings say, plus a callback for the Notification hook. Keeps the tab title at
// "huddle — needs you: N" while anything waits.
import type { NotifyKind } from '../settings/schema.js';
import { BELL, detectDesktopProtocol, osc777, osc9, POP_TITLE, PUSH_TITLE, setTitle, tmuxPassThrough, type DesktopProtocol } from './terminal-sequences.js';

export interface NotificationSettings {
  bell?: boolean | undefined;
  desktop?: 'auto' | 'osc9' | 'osc777' | 'off' | undefined;
  events?: readonly NotifyKind[] | undefined;
  title?: boolean | undefined;
}

export interface Notification {
  kind: NotifyKind;
  /** One line: "alice waits for approval: rm -rf build". */
  message: string;
  /** Defaults to "huddle". */
  title?: string;
}

export interface NotifierOptions {
  settings?: NotificationSettings;
  /** Where the sequences go: the console's terminal (process.stdout.write). */
  write: (text: string) => void;
  env?: NodeJS.ProcessEnv;
  /** Every notification that passes the policy (the Notification hook runs here). */
  onNotify?: (notification: Notification) => void;
  /** The same notification again within this long is not repeated (default 2 s). */
  repeatAfterMs?: number;
  now?: () => number;
}

export const BASE_TITLE = 'huddle';

/** The console's tab title: "huddle — needs you: 2", or just "huddle". */
export function needsYouTitle(count: number, base = BASE_TITLE): string {
  return count > 0 ? `${base} — needs you: ${count}` : base;
}

export class Notifier {
  readonly #options: NotifierOptions;
  readonly #protocol: DesktopProtocol | undefined;
  readonly #inTmux: boolean;
  readonly #recent = new Map<string, number>();
  #title: string | undefined;
  #titlePushed = false;

  constructor(options: NotifierOptions) {
    this.#options = options;
    const env = options.env ?? process.env;
    const desktop = options.settings?.desktop ?? 'auto';
    this.#protocol = desktop === 'off' ? undefined : desktop === 'auto' ? detectDesktopProtocol(env) : desktop;
    this.#inTmux = Boolean(env.TMUX);
  }

  /** Whether this kind of event notifies at all (settings `notifications.events`). */
  wants(kind: NotifyKind): boolean {
    const events = this.#options.settings?.events;
    return events === undefined || events.includes(kind);
  }

  /** Notifies unless the policy says no or the same thing was just said; returns whether it did. */
  notify(notification: Notification): boolean {
    if (!this.wants(notification.kind)) return false;
    const now = this.#options.now?.() ?? Date.now();
    const key = `${notification.kind}\n${notification.message}`;
    const last = this.#recent.get(key);
    if (last !== undefined && now - last < (this.#options.repeatAfterMs ?? 2_000)) return false;
    this.#recent.set(key, now);
    if (this.#recent.size > 100) this.#recent.delete(this.#recent.keys().next().value!);

    let out = '';
    if (this.#options.settings?.bell ?? true) out += BELL;
    if (this.#protocol) {
      const title = notification.title ?? BASE_TITLE;
      const sequence = this.#protocol === 'osc9' ? osc9(`${title}: ${notification.message}`) : osc777(title, notification.message);
      out += this.#inTmux ? tmuxPassThrough(sequence) : sequence;
    }
    if (out) this.#options.write(out);
    this.#options.onNotify?.(notification);
    return true;
  }

  /** Sets the tab title for N waiting items; writes only when it changes. The first call saves the old title. */
  setNeedsYou(count: number): void {
    if (!(this.#options.settings?.title ?? true)) return;
    const title = needsYouTitle(count);
    if (title === this.#title) return;
    let out = '';
    if (!this.#titlePushed) {
      out += PUSH_TITLE;
      this.#titlePushed = true;
    }
    this.#title = title;
    this.#options.write(out + setTitle(title));
  }

  /** Gives the terminal its own title back (call when the console exits). */
  restoreTitle(): void {
    if (!this.#titlePushed) return;
    this.#titlePushed = false;
    this.#title = undefined;
    this.#options.write(POP_TITLE);
  }
}
