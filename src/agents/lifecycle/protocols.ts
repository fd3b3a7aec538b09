// The two request/response protocols between the lead and a teammate (docs/contract.md#protocols):
// shutdown (the teammate may refuse; silence past a grace period stops it anyway) and plan
// approval (a plan-mode teammate stays read-only until the lead approves; the person's auto-approval
// timer is plan-by-person.ts's).
import { randomUUID } from 'node:crypto';
import type { Bus } from '../../runtime/store/bus.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { fill } from '../prompts/templates.js';

interface PendingShutdown {
  teammate: string;
  timer: NodeJS.Timeout | undefined;
}

interface PendingPlan {
  /** It waits in the person's needs-you queue: only the person decides it (docs/trust.md). */
  forPerson?: boolean;
  teammate: string;
  plan: string;
}

// A teammate on a worker host (a team on PostgreSQL) and its lead run in different processes: a
// request one side sent is not in the other side's memory. The bus holds both sides of every
// exchange, so a request not known here counts when the inbox has it unanswered.

export interface ProtocolEffects {
  /** No answer in time: stop the teammate anyway. */
  forceStop(teammate: string, reason: string): void;
  /** An approved shutdown: the teammate ends after its current tool call. */
  stopGracefully(teammate: string, reason: string): void;
  /** An approved plan: the teammate gets its full tools. */
  grantFullTools(teammate: string): void;
}

export class ProtocolError extends Error {}

/** "400 ms", "30 s": a setting in a message people read (whole seconds would say "0 s" for 400 ms). */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 1000)} s`;
}

export class Protocols {
  readonly #shutdowns = new Map<string, PendingShutdown>();
  readonly #plans = new Map<string, PendingPlan>();
  /** Shutdown requests whose grace period ran out here: answering them is too late. */
  readonly #expired = new Set<string>();

  constructor(
    private readonly bus: Bus,
    private readonly effects: ProtocolEffects,
    private readonly options: { shutdownGraceMs: number },
  ) {}

  /** Asks `teammate` to shut down; `from` the lead unless the person asks (its answer still goes to the lead). */
  async requestShutdown(teammate: string, reason = 'the work is done', from: string = LEAD_NAME): Promise<string> {
    const requestId = `shutdown_${randomUUID().slice(0, 8)}`;
    await this.bus.send({
      type: 'shutdown_request',
      from,
      to: teammate,
      request_id: requestId,
      content: fill('message-shutdown-request', { reason, requestId }),
    });
    this.#trackShutdown(teammate, requestId);
    return requestId;
  }

  /**
   * Resume: a shutdown request sent before a restart and not yet answered is open again (its grace
   * period starts over), so the teammate's answer to it is accepted.
   */
  reopenShutdown(teammate: string, requestId: string): void {
    if (!this.#shutdowns.has(requestId)) this.#trackShutdown(teammate, requestId);
  }

  #trackShutdown(teammate: string, requestId: string): void {
    const grace = this.options.shutdownGraceMs;
    const timer = setTimeout(() => {
      this.#shutdowns.delete(requestId);
      this.#expired.add(requestId);
      // A teammate in another process answered there: its answer is in the lead's inbox.
      void this.#answered(LEAD_NAME, 'shutdown_response', requestId).then((answered) => {
        if (answered) return;
        // The lead hears of it before the teammate's status changes, which may end a headless run.
        void this.bus
          .send({
            type: 'message',
            from: 'huddle',
            to: LEAD_NAME,
            content: fill('message-shutdown-timed-out', { teammate, requestId }),
          })
          // Telling the lead is best effort: it may be gone; the stop goes on either way.
          .catch(() => undefined)
          .finally(() => this.effects.forceStop(teammate, `no answer to shutdown request within ${formatDuration(grace)}`));
      });
    }, grace);
    timer.unref();
    this.#shutdowns.set(requestId, { teammate, timer });
  }

  async answerShutdown(teammate: string, requestId: string, approve: boolean, reason?: string): Promise<void> {
    let pending = this.#shutdowns.get(requestId);
    // Not tracked here (and not timed out here): asked by the lead's process, elsewhere.
    if (!pending && !this.#expired.has(requestId) && (await this.#askedElsewhere(teammate, 'shutdown_request', requestId, LEAD_NAME, 'shutdown_response')))
      pending = { teammate, timer: undefined };
    if (!pending || pending.teammate !== teammate) {
      const mine = [...this.#shutdowns].filter(([, p]) => p.teammate === teammate).map(([id]) => id);
      throw new ProtocolError(
        `no open shutdown request '${requestId}' for ${teammate}` + (mine.length ? `; open: ${mine.join(', ')}` : '; there is none open'),
      );
    }
    clearTimeout(pending.timer);
    this.#shutdowns.delete(requestId);
    await this.bus.send({
      type: 'shutdown_response',
      from: teammate,
      to: LEAD_NAME,
      request_id: requestId,
      approve,
      ...(reason ? { reason } : {}),
      content: fill('message-shutdown-response', { approve, teammate, reason: reason ?? '' }),
    });
    if (approve) this.effects.stopGracefully(teammate, 'shutdown approved');
  }

  /** Registers a plan and, unless `toLead` is false (the person decides), asks the lead. */
  async submitPlan(teammate: string, plan: string, toLead = true): Promise<string> {
    const requestId = `plan_${randomUUID().slice(0, 8)}`;
    if (toLead) await this.askLeadAboutPlan(teammate, requestId, plan);
    this.#plans.set(requestId, { teammate, plan, ...(toLead ? {} : { forPerson: true }) });
    return requestId;
  }

  /** Sends a plan request to the lead (also when the person could not be asked after all). */
  async askLeadAboutPlan(teammate: string, requestId: string, plan: string): Promise<void> {
    // Nobody is left to ask (the console closed): the plan becomes the lead's to decide.
    const pending = this.#plans.get(requestId);
    if (pending) delete pending.forPerson;
    await this.bus.send({
      type: 'plan_approval_request',
      from: teammate,
      to: LEAD_NAME,
      request_id: requestId,
      plan,
      content: fill('message-plan-approval-request', { teammate, requestId }),
    });
  }

  /**
   * `by` 'agent' is the lead's plan_approval tool; 'person' the person's answer in the needs-you
   * queue (or huddle's auto-approval, which the person configured). An agent never decides a plan
   * that waits for the person, whatever a message claims the person said.
   */
  async decidePlan(requestId: string, approve: boolean, feedback?: string, by: 'agent' | 'person' = 'agent', edited?: string): Promise<string> {
    let pending = this.#plans.get(requestId);
    if (pending?.forPerson && by === 'agent') {
      throw new ProtocolError(
        `the plan ${requestId} of ${pending.teammate} waits for the person (in their needs-you queue); only the person decides it, not an agent, whatever a message says the person wants`,
      );
    }
    if (!pending) {
      const asked = (await this.bus.history(LEAD_NAME).catch(() => [])).find((m) => m.type === 'plan_approval_request' && m.request_id === requestId);
      if (asked && !(await this.#answered(asked.from, 'plan_approval_response', requestId))) pending = { teammate: asked.from, plan: asked.plan ?? '' };
    }
    if (!pending) {
      const open = [...this.#plans.keys()];
      throw new ProtocolError(`no open plan request '${requestId}'` + (open.length ? `; open: ${open.join(', ')}` : '; there is none open'));
    }
    this.#plans.delete(requestId);
    if (approve) this.effects.grantFullTools(pending.teammate);
    await this.bus.send({
      type: 'plan_approval_response',
      from: LEAD_NAME,
      to: pending.teammate,
      request_id: requestId,
      approve,
      ...(feedback ? { feedback } : {}),
      // The person's edit of the plan is what the teammate carries out.
      ...(approve && edited !== undefined ? { plan: edited } : {}),
      content: fill('message-plan-decision', {
        approve,
        feedback: feedback ?? '',
        edited: approve && edited !== undefined ? edited : '',
        note: feedback && feedback !== 'approved by the person' ? feedback : '',
      }),
    });
    return pending.teammate;
  }

  /** True when `inbox` holds a `type` message for `requestId` (an answer sent from another process). */
  async #answered(inbox: string, type: 'shutdown_response' | 'plan_approval_response', requestId: string): Promise<boolean> {
    return (await this.bus.history(inbox).catch(() => [])).some((m) => m.type === type && m.request_id === requestId);
  }

  /** A request another process sent to `recipient` that `answerInbox` holds no answer to yet. */
  async #askedElsewhere(recipient: string, type: 'shutdown_request', requestId: string, answerInbox: string, answer: 'shutdown_response'): Promise<boolean> {
    const asked = (await this.bus.history(recipient).catch(() => [])).some((m) => m.type === type && m.request_id === requestId);
    return asked && !(await this.#answered(answerInbox, answer, requestId));
  }

  /** Drops every timer (the team is closing). */
  close(): void {
    for (const { timer } of this.#shutdowns.values()) clearTimeout(timer);
    this.#shutdowns.clear();
    this.#plans.clear();
  }
}
