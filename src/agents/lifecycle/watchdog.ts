// The stall watchdog: a working agent that has emitted no event for `stallMs` (a model that went
// silent, a tool that never returns) is interrupted, and everyone is told: a `warning` event, its
// status reason, and — for a teammate — the lead, through its inbox. One timer for the whole team,
// armed only while some agent works: an idle team costs nothing.
import type { EventHub } from '../../runtime/events/events.js';
import type { Approvals } from '../../runtime/store/approvals.js';
import { clockTime } from '../loop/liveness.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { formatDuration } from './protocols.js';
import { fill } from '../prompts/templates.js';
import type { Agent } from '../loop/agent.js';
import type { RestartResult } from './restart.js';
import type { TeamContext } from '../team-context.js';

/** What the team watchdog needs of the team. */
export interface WatchedTeam {
  readonly ctx: Pick<TeamContext, 'config' | 'hub' | 'roster' | 'bus'>;
  /** The lead and the live teammates. */
  agents(): Agent[];
}

/** What the needs-you notices need: the queue to ask in, and the restart a `y` asks for. */
export interface NoticeHost {
  readonly approvals: Approvals;
  readonly ctx: Pick<TeamContext, 'hub'>;
  restart(name: string): Promise<RestartResult>;
}

export const DEFAULT_STALL_MS = 600_000;

export interface WatchedAgent {
  readonly name: string;
  readonly loop: { readonly running: boolean };
}

export interface StallWatchdogOptions<A extends WatchedAgent> {
  hub: EventHub;
  stallMs: number;
  /** The agents that may be watched now (live ones). */
  agents(): Iterable<A>;
  /** True while `agent` counts as working: waiting on a person or a plan is no stall. */
  isWorking(agent: A): boolean;
  onStall(agent: A, silentMs: number): void;
}

export class StallWatchdog<A extends WatchedAgent = WatchedAgent> {
  readonly #o: StallWatchdogOptions<A>;
  /** Per agent, when its last event was seen (ms since the epoch). */
  readonly #lastEvent = new Map<string, number>();
  readonly #unsubscribe: () => void;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: StallWatchdogOptions<A>) {
    this.#o = options;
    // Listeners on the hub must be cheap: a map write, and a timer only when none is armed.
    this.#unsubscribe = options.hub.subscribe((event) => {
      this.#lastEvent.set(event.agent, Date.now());
      if (!this.#timer) this.#arm(this.#o.stallMs);
    });
  }

  /** True while the one timer is set: never when no agent works (an idle team costs nothing). */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  /** When `agent` was last heard from (for tests and /team). */
  lastEventAt(agent: string): number | undefined {
    return this.#lastEvent.get(agent);
  }

  stop(): void {
    this.#stopped = true;
    this.#unsubscribe();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(delayMs: number): void {
    if (this.#stopped || this.#o.stallMs <= 0) return;
    this.#timer = setTimeout(() => this.#check(), Math.max(1, delayMs));
    // The watchdog alone must never keep a process alive.
    this.#timer.unref?.();
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    const now = Date.now();
    const { stallMs } = this.#o;
    let next = Infinity;
    for (const agent of this.#o.agents()) {
      if (!agent.loop.running || !this.#o.isWorking(agent)) continue;
      const last = this.#lastEvent.get(agent.name);
      if (last === undefined) {
        this.#lastEvent.set(agent.name, now);
        next = Math.min(next, stallMs);
        continue;
      }
      const silent = now - last;
      if (silent >= stallMs) {
        // Counted from now, so one stall is reported once, not on every check.
        this.#lastEvent.set(agent.name, now);
        try {
          this.#o.onStall(agent, silent);
        } catch {
          // Reporting a stall must never take the watchdog down.
        }
        next = Math.min(next, stallMs);
      } else {
        next = Math.min(next, last + stallMs - now);
      }
    }
    // Re-armed only while someone works; the next event arms it again otherwise.
    if (next < Infinity) this.#arm(next);
  }
}

export interface SupervisionNotice {
  agent: string;
  kind: 'stalled' | 'failed';
  text: string;
}

/**
 * A failure no restart can fix, and what to do instead; undefined when a restart may help (a
 * connection that failed, an overloaded API, a stall). A refused key fails every restart the same
 * way (the agent's pane and the console's notice already say what to fix: `null` advice); a
 * conversation longer than the model's context fails again from the restart's own summary call.
 */
export function restartCannotFix(agent: string, error: string): { advice: string | null } | undefined {
  if (/\((401|403)\)/.test(error)) return { advice: null };
  if (/authentication method|no API key/i.test(error)) {
    return {
      advice: `${agent} has no API key to call the model with: quit (Ctrl+C twice), export ANTHROPIC_API_KEY=… (or pass --api-key-file FILE), then huddle -c`,
    };
  }
  if (/prompt is too long/i.test(error)) {
    return { advice: `${agent}'s conversation is longer than the model's context: /compact ${agent} summarises it (or /clear in its pane starts it afresh)` };
  }
  return undefined;
}

/**
 * Puts a stall or failure in the person's needs-you queue (the console's /approvals) as a
 * 'notice': y restarts the agent, n dismisses it. One open notice per agent; nothing without a
 * console (the queue is unanswerable headless, and the lead already has it in its inbox). A
 * failure a restart cannot fix is not offered one: a warning says what to do instead.
 */
export function needsYouNotices(team: NoticeHost): (notice: SupervisionNotice) => void {
  const open = new Set<string>();
  return (notice) => {
    if (!team.approvals.answerable || open.has(notice.agent)) return;
    const unfixable = notice.kind === 'failed' ? restartCannotFix(notice.agent, notice.text) : undefined;
    if (unfixable) {
      if (unfixable.advice) team.ctx.hub.emit(notice.agent, 'warning', { message: unfixable.advice, advice: true });
      return;
    }
    open.add(notice.agent);
    void team.approvals
      .request({
        agent: notice.agent,
        kind: 'notice',
        tool: notice.kind,
        summary: notice.text,
        reason: 'a restart keeps its workspace, its tasks and a summary of its conversation',
        prefixes: [],
      })
      .then(async (outcome) => {
        open.delete(notice.agent);
        // The restart says what it did itself (restart.ts's warnings: restarting…, then restarted).
        if (outcome.kind === 'approved') await team.restart(notice.agent);
      })
      .catch((error: unknown) => {
        open.delete(notice.agent);
        team.ctx.hub.emit(notice.agent, 'warning', { message: `restart failed: ${error instanceof Error ? error.message : String(error)}`, restart: 'failed' });
      });
  };
}

/** The team's watchdog: started by Team.start, stopped by Team.close. Undefined when turned off (stallMs 0). */
export function startTeamWatchdog(team: WatchedTeam, notify?: (notice: SupervisionNotice) => void): StallWatchdog<Agent> | undefined {
  const stallMs = team.ctx.config.stallMs ?? DEFAULT_STALL_MS;
  if (stallMs <= 0) return undefined;
  const { hub, roster, bus } = team.ctx;
  /** Agents just interrupted for a stall: their next resting status says so. */
  const stalledNote = new Map<string, string>();
  const unsubscribe = hub.subscribe((event) => {
    if (event.type !== 'status') return;
    if (event.status === 'failed') notify?.({ agent: event.agent, kind: 'failed', text: `${event.agent} failed: ${event.error ?? 'unknown error'}` });
    const note = stalledNote.get(event.agent);
    if (note === undefined) return;
    stalledNote.delete(event.agent);
    if (event.status === 'working') return;
    const reason = event.reason !== undefined ? `${note}; ${event.reason}` : note;
    // Only the reason: the status stays what the agent set (never regressed by this write).
    void roster.update(event.agent, { status_reason: reason }).catch(() => undefined);
  });
  const watchdog = new StallWatchdog<Agent>({
    hub,
    stallMs,
    agents: () => team.agents(),
    isWorking: (agent) => roster.get(agent.name)?.status === 'working',
    onStall(agent, silentMs) {
      const silent = formatDuration(silentMs);
      const message = `stalled: no event for ${silent} while working; interrupted`;
      stalledNote.set(agent.name, `interrupted at ${clockTime()} after ${silent} without an event`);
      agent.events.emit('warning', { message, stalled: true, silent_ms: silentMs });
      agent.interrupt();
      const text = `${agent.name} stalled (no event for ${silent}) and was interrupted`;
      notify?.({ agent: agent.name, kind: 'stalled', text });
      if (agent.name !== LEAD_NAME) {
        const content = fill('message-teammate-stalled', { teammate: agent.name, silent });
        // Telling the lead is best effort: it may be gone; the stall is in the log either way.
        void bus.send({ type: 'message', from: 'huddle', to: LEAD_NAME, content }).catch(() => undefined);
      }
    },
  });
  const stop = watchdog.stop.bind(watchdog);
  watchdog.stop = () => {
    unsubscribe();
    stop();
  };
  return watchdog;
}
