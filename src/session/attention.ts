// Getting the person's attention (docs/console.md#notifications): when something waits for them (a tool call to approve,
// a plan, a budget stop, a stalled or failed agent) or the team has finished, the notifier rings the
// bell and sends a desktop notification through the terminal, as the settings say, and the
// Notification hooks run (ntfy, Slack, a phone). The tab title counts what waits: "needs you: N".
// The console watches a live session; a headless run has no terminal to ring, only the hooks and the webhook.
import type { NotifyKind } from '../runtime/settings/schema.js';
import { Notifier } from '../runtime/notify/notifier.js';
import { postWebhook } from '../runtime/notify/webhook.js';
import { LEAD_NAME } from '../runtime/vocabulary.js';
import type { TeamSession } from './team-session.js';
import type { RunEnd } from './run-end.js';

/** Claude Code's `notification_type` for each kind (the hooks' matchers match it). */
const NOTIFICATION_TYPE: Record<NotifyKind, string> = {
  approval: 'permission_prompt',
  plan: 'plan_approval',
  budget: 'budget_stop',
  failure: 'agent_failed',
  done: 'team_finished',
  question: 'idle_prompt',
};

/** Work that took at least this long notifies when it is done; a quick answer does not ring. */
export const DONE_WORTH_NOTIFYING_MS = 15_000;

export class Attention {
  readonly #session: TeamSession;
  readonly #notifier: Notifier;

  constructor(session: TeamSession, notifier: Notifier) {
    this.#session = session;
    this.#notifier = notifier;
  }

  /** Notifies (unless the settings say no or it was just said) and runs the Notification hooks; resolves when they ran. */
  async notify(agent: string, kind: NotifyKind, message: string): Promise<void> {
    if (!this.#notifier.notify({ kind, message })) return;
    const session = this.#session;
    const url = session.settings?.notifications?.webhook?.url;
    const webhook = url
      ? postWebhook(url, { text: message, event: kind, team: session.teamName, agent, notification_type: NOTIFICATION_TYPE[kind] }).then((failed) => {
          // A failed webhook is a warning in the log, never the end of anything; the URL is never in it.
          if (failed) session.hub.emit('huddle', 'warning', { message: failed });
        })
      : undefined;
    // A notification hook that fails must not stop what it was telling about; the hook runner logs it.
    await session.notificationHook(agent, { message, title: 'huddle', notification_type: NOTIFICATION_TYPE[kind] }).catch(() => undefined);
    await webhook;
  }

  /** Follows the live session: what waits for the person, failures, the team finishing. Returns the stop. */
  watch(options: { done?: boolean; teammateFailures?: boolean } = {}): () => void {
    const session = this.#session;
    const waiting = () => this.#notifier.setNeedsYou(session.waitingForPerson().length);
    /** When the team started on the work now finishing: a quick answer is no news worth a bell. */
    let since: number | undefined;
    const offEvents = session.subscribe((event) => {
      if (event.type === 'status' && event.status === 'working') since ??= Date.now();
      if (event.type === 'approval_requested') {
        const request = session.waitingForPerson().find((r) => r.id === event.id);
        const kind: NotifyKind =
          request?.kind === 'budget' ? 'budget' : request?.kind === 'plan' ? 'plan' : request?.kind === 'notice' ? 'failure' : 'approval';
        const message =
          kind === 'approval'
            ? `${event.agent} waits for your approval: ${event.tool} ${event.summary}`
            : kind === 'plan'
              ? `${event.agent} sent a plan for your approval`
              : kind === 'budget'
                ? `budget reached: ${event.summary}`
                : event.summary;
        void this.notify(event.agent, kind, message);
        waiting();
      } else if (event.type === 'approval_resolved') {
        waiting();
      } else if (event.type === 'status' && event.status === 'failed' && (event.agent === LEAD_NAME || options.teammateFailures)) {
        // In the console a teammate's failure waits in the queue (watchdog.ts) and notifies from there; headless nothing queues it.
        void this.notify(event.agent, 'failure', `${event.agent === LEAD_NAME ? 'the lead' : event.agent} failed: ${event.error ?? 'unknown error'}`);
      }
    });
    const offFinished = session.onTeamFinished((text) => {
      const took = since === undefined ? 0 : Date.now() - since;
      since = undefined;
      if (took >= DONE_WORTH_NOTIFYING_MS && options.done !== false)
        void this.notify(LEAD_NAME, 'done', `the team finished${text ? `: ${firstLine(text)}` : ''}`);
    });
    waiting();
    return () => {
      offEvents();
      offFinished();
      this.#notifier.restoreTitle();
    };
  }
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** A notifier that writes nothing: a headless run's stdout and stderr belong to its output; the hooks and the webhook still hear. */
function silentNotifier(session: TeamSession): Notifier {
  return new Notifier({ settings: { ...session.settings?.notifications, bell: false, desktop: 'off', title: false }, write: () => undefined });
}

/** A headless run: plans waiting for the person and failures reach the Notification hooks and the webhook while it runs (its end: announceRunEnd). */
export function watchHeadless(session: TeamSession): () => void {
  return new Attention(session, silentNotifier(session)).watch({ done: false, teammateFailures: true });
}

/**
 * A headless run has ended: its Notification hooks (notify my phone when CI is done). Nothing is
 * written to the terminal: stdout and stderr belong to the run's output.
 */
export async function announceRunEnd(session: TeamSession, end: { kind: RunEnd['kind'] }, message: string): Promise<void> {
  const notifier = silentNotifier(session);
  const kind: NotifyKind = end.kind === 'settled' ? 'done' : end.kind === 'budget' ? 'budget' : 'failure';
  await new Attention(session, notifier).notify(LEAD_NAME, kind, message);
}
