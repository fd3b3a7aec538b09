// The lead: runs the person's prompts, and is woken by its inbox whenever it is not in a turn
// (docs/contract.md#protocols), so it can end its turn to wait for its teammates' reports.
import { Agent, type AgentSpec } from '../loop/agent.js';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { collapseHandledReports } from '../loop/handled-reports.js';
import { waitingSince } from '../loop/liveness.js';
import type { PendingInput, TurnOutcome } from '../loop/agent-loop.js';
import type { TeamContext } from '../team-context.js';
import { MAX_HOOK_CONTINUATIONS } from '../tools/team-hooks.js';
import { isOwnersFinish } from '../tools/completion-report.js';
import { StoreError } from '../../runtime/store/store-errors.js';
import { HUDDLE_SENDER, type MemberStatus } from '../../runtime/vocabulary.js';

export interface LeadTurn {
  input: 'prompt' | 'inbox';
  outcome: TurnOutcome;
}

/** How long the lead's inbox must be quiet before it reads the reports that woke it (leadCoalesceMs). */
export const DEFAULT_LEAD_COALESCE_MS = 1_000;

/**
 * The longest the lead waits for more reports, in quiet windows: 8 when a message may ask it
 * something, 30 when every message since its last look reports finished work (nothing waits on the
 * lead's answer; the board and the reports keep everything it will read).
 */
const MAX_WAIT_WINDOWS = 8;
const MAX_WAIT_WINDOWS_REPORTS_ONLY = 30;

/** Working, or waiting to go on (for the person, a slot, the cache): it may still report. */
function atWork(status: MemberStatus): boolean {
  return status === 'working' || status === 'waiting';
}

export class Lead extends Agent {
  readonly #prompts: string[] = [];
  readonly #turnListeners = new Set<(turn: LeadTurn) => void>();
  #wake: (() => void) | undefined;
  #closed = new AbortController();
  #pump: Promise<void> | undefined;
  /** From taking a prompt or inbox messages until the turn they start has ended. */
  #busy = false;
  /** The text of the last turn that ended normally: what headless prints. */
  lastText = '';
  lastOutcome: TurnOutcome | undefined;

  /** Reports (message_sent events addressed to the lead) since it last looked at its inbox, and when the last came. */
  #arrivals = 0;
  #lastArrival = 0;
  /** Whether one of those may ask the lead something: not a teammate's message right after it finished a task. */
  #mayAsk = false;
  /** Teammates that finished a task since their last message to the lead: that message is its report. */
  readonly #finishedSince = new Set<string>();
  /** huddle's own notices (a teammate failed, stalled) not yet taken from the inbox, by id: read at once. */
  readonly #unreadNotices = new Set<string>();
  #gathering = false;

  constructor(ctx: TeamContext, spec: AgentSpec) {
    super(ctx, spec);
    // Counted from the team's events, not from the inbox: waiting for reports to gather costs no look at it.
    const off = ctx.hub.subscribe((event) => {
      if (event.type === 'task') {
        // The same finish that puts the task's result into the owner's next report (completion-report.ts).
        if (isOwnersFinish(event) && event.agent !== this.name) this.#finishedSince.add(event.agent);
        return;
      }
      if (event.type === 'message_delivered' && event.agent === this.name) {
        for (const id of event.ids) this.#unreadNotices.delete(id);
        return;
      }
      if (event.type !== 'message_sent' || event.to !== this.name) return;
      this.#arrivals += 1;
      this.#lastArrival = Date.now();
      if (!(event.message_type === 'message' && this.#finishedSince.delete(event.from))) this.#mayAsk = true;
      if (event.from === HUDDLE_SENDER) {
        this.#unreadNotices.add(event.id);
        if (this.#gathering) this.#wake?.();
      }
    });
    this.#closed.signal.addEventListener('abort', off, { once: true });
  }

  /** Reports it handled turns ago are sent as one line each (handled-reports.ts). */
  protected override viewMessages(messages: MessageParam[]): MessageParam[] {
    return collapseHandledReports(messages);
  }

  /** True when the lead is between turns with nothing queued. */
  get isIdle(): boolean {
    return !this.#busy && !this.loop.running && this.#prompts.length === 0;
  }

  /**
   * Queues a prompt from the person. Between turns it starts the next turn; mid-turn it enters
   * before the lead's next model call as a user turn (steering, like a teammate's inbox).
   */
  prompt(text: string): void {
    this.#prompts.push(text);
    this.#wake?.();
  }

  /**
   * Busy before the messages are acked: between the ack and the turn, the lead must not look idle
   * with an empty inbox (a headless run would end before it read them).
   */
  protected override async beforeTaking(): Promise<void> {
    this.#busy = true;
  }

  /** A prompt queued while the lead waits wakes it. */
  readonly #promptWake = (wake: () => void): (() => void) => {
    this.#wake = wake;
    return () => {
      if (this.#wake === wake) this.#wake = undefined;
    };
  };

  /**
   * Reports arriving close together wake the lead once: after a teammate's report, it waits until no
   * other came for leadCoalesceMs and no teammate is still working on a task (its report is imminent),
   * eight times leadCoalesceMs at most, thirty while every message reports finished work (a
   * teammate's message right after it completed a task); then one look at the inbox takes
   * everything that came. Once no other member works or waits, no more can come: it reads them at
   * once. The arrivals are counted from the team's events, so the wait never looks at the inbox (one
   * scan per delivery). huddle's own notice (a teammate failed or stalled) and the person's prompt
   * end the wait at once. Busy meanwhile: the team is not settled.
   */
  async #gatherReports(): Promise<void> {
    const quietMs = this.ctx.config.leadCoalesceMs ?? DEFAULT_LEAD_COALESCE_MS;
    const arrived = this.#arrivals;
    this.#arrivals = 0;
    if (quietMs <= 0 || arrived === 0 || this.#prompts.length || this.#unreadNotices.size || this.#closed.signal.aborted) {
      this.#mayAsk = false;
      return;
    }
    this.#busy = true;
    this.#gathering = true;
    try {
      const started = Date.now();
      for (;;) {
        // A question that comes while reports gather shortens the wait from then on.
        const deadline = started + (this.#mayAsk ? MAX_WAIT_WINDOWS : MAX_WAIT_WINDOWS_REPORTS_ONLY) * quietMs;
        const quietFor = Date.now() - this.#lastArrival;
        const left = Math.min(quietMs - quietFor, deadline - Date.now());
        if (deadline - Date.now() <= 0 || this.#teamAtRest()) return;
        if (left <= 0 && !this.#reportsImminent()) return;
        await this.#pause(left > 0 ? left : Math.min(quietMs, deadline - Date.now()));
        if (this.#prompts.length || this.#unreadNotices.size || this.#closed.signal.aborted) return;
      }
    } finally {
      this.#arrivals = 0; // what came meanwhile is taken by the look that follows
      this.#mayAsk = false;
      this.#gathering = false;
      this.#busy = false;
    }
  }

  /** A teammate is working on a task: its report will come. */
  #reportsImminent(): boolean {
    return this.ctx.roster.members().some((member) => member.name !== this.name && member.status === 'working' && member.task != null);
  }

  /** No other member works or waits (for the person, a slot, the cache): nothing will report until something wakes one. */
  #teamAtRest(): boolean {
    return !this.ctx.roster.members().some((member) => member.name !== this.name && atWork(member.status));
  }

  /** Waits `ms`, or less when the person prompts, the roster changes (the team may be at rest) or the lead closes. */
  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.#closed.signal;
      const done = () => {
        clearTimeout(timer);
        stop();
        offRoster();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const stop = this.#promptWake(done);
      // Only a member that stops working can bring the team to rest (a busy team changes status often).
      const offRoster = this.ctx.roster.onChange((change) => {
        if (!change.member || !atWork(change.member.status)) done();
      });
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Mid-turn: the person's queued prompts first (source 'user'), then unread inbox messages. */
  protected override async pendingInput(): Promise<PendingInput[] | undefined> {
    const prompts: PendingInput[] = [];
    for (const text of this.#prompts.splice(0)) {
      const screened = await this.#screenPrompt(text);
      if (screened !== undefined) prompts.push({ text: screened, source: 'user' });
    }
    const inbox = (await super.pendingInput()) ?? [];
    const all = [...prompts, ...inbox];
    return all.length ? all : undefined;
  }

  /**
   * UserPromptSubmit hooks (docs/contract.md#hooks) on a prompt of the person's: a block drops it and says
   * why to the person (a warning); context a hook adds goes with the prompt. Undefined: dropped.
   */
  async #screenPrompt(text: string): Promise<string | undefined> {
    const hooks = this.ctx.hooks;
    if (!hooks?.has('UserPromptSubmit')) return text;
    const outcome = await hooks.run(this.events, { hook_event_name: 'UserPromptSubmit', prompt: text }, { cwd: this.loop.workspace.root });
    if (outcome.blocked || outcome.stop) {
      this.events.emit('warning', {
        message: `your prompt was not sent to the lead: a UserPromptSubmit hook blocked it: ${outcome.reason ?? outcome.stop}`,
        hook: 'UserPromptSubmit',
      });
      return undefined;
    }
    return outcome.additionalContext ? `${text}\n\n<user-prompt-submit-hook>\n${outcome.additionalContext}\n</user-prompt-submit-hook>` : text;
  }

  /**
   * Stop hooks after a turn the lead ended itself: a block keeps it working, with the reason as its
   * next turn (`stop_hook_active` tells the hook it already did so), a few times at most.
   */
  async #afterTurn(outcome: TurnOutcome): Promise<TurnOutcome> {
    const hooks = this.ctx.hooks;
    let continued = 0;
    while (outcome.kind === 'end_turn' && hooks?.has('Stop') && !this.#closed.signal.aborted) {
      const hook = await hooks.run(
        this.events,
        { hook_event_name: 'Stop', stop_hook_active: continued > 0, last_assistant_message: outcome.text },
        { cwd: this.loop.workspace.root },
      );
      if (!hook.blocked || hook.stop) break;
      if (continued >= MAX_HOOK_CONTINUATIONS) {
        this.events.emit('warning', { message: `a Stop hook kept the lead working ${continued} times in a row; it is let go now`, hook: 'Stop' });
        break;
      }
      continued += 1;
      outcome = await this.loop.runTurn(`A Stop hook kept you from ending your turn: ${hook.reason}`, 'system');
    }
    return outcome;
  }

  /** After a restart (restart.ts): no longer failed; it works again on the next prompt or message. */
  async restarted(): Promise<void> {
    await this.setStatus('idle', { reason: waitingSince('restarted; waiting for a prompt') });
  }

  onTurnEnd(listener: (turn: LeadTurn) => void): () => void {
    this.#turnListeners.add(listener);
    return () => this.#turnListeners.delete(listener);
  }

  start(): void {
    // The lead's loop never ends the process: what it cannot go on from (the team's state no longer
    // writable, say: the store has said so already) ends the run as the lead's failure.
    this.#pump ??= this.#run().catch((error: unknown) => {
      this.#busy = false;
      this.lastOutcome = { kind: 'failed', error: error instanceof Error ? error.message : String(error) };
      if (!(error instanceof StoreError)) this.events.emit('error', { message: this.lastOutcome.error });
    });
  }

  async close(): Promise<void> {
    this.#closed.abort();
    this.loop.interrupt();
    this.#wake?.();
    await this.#pump;
  }

  async #run(): Promise<void> {
    await this.setStatus('idle', { reason: waitingSince('waiting for a prompt') });
    while (!this.#closed.signal.aborted) {
      let prompt = this.#prompts.shift();
      if (prompt !== undefined) {
        this.#busy = true; // not idle while its hooks decide (a headless run must not end here)
        prompt = await this.#screenPrompt(prompt);
        if (prompt === undefined) {
          this.#busy = false;
          // Dropped by a hook: the person was told; a run with nobody to tell ends on it (run-end.ts).
          const outcome: TurnOutcome = { kind: 'failed', error: 'the prompt was blocked by a UserPromptSubmit hook' };
          this.lastOutcome = outcome;
          for (const listener of this.#turnListeners) listener({ input: 'prompt', outcome });
          continue;
        }
      }
      if (prompt === undefined) {
        await this.#gatherReports();
        // The person spoke meanwhile: their prompt goes first.
        if (this.#prompts.length) continue;
      }
      // One look at the inbox sees and takes its messages (beforeTaking marks the lead busy in between).
      const input = prompt ?? (await this.deliverInbox());
      if (input === undefined) {
        this.#busy = false;
        // A prompt queued while the loop was looking at its inbox must not wait for the next wake.
        if (this.#prompts.length) continue;
        await this.inbox.wait({ signal: this.#closed.signal, wakeOn: [this.#promptWake] });
        continue;
      }
      this.#busy = true;
      await this.setStatus('working', { reason: prompt !== undefined ? 'on your prompt' : 'on its inbox' });
      // A turn its inbox started needs no second look at it before the first call.
      const turn = prompt !== undefined ? this.loop.runTurn(input, 'user') : this.runTurnAfterLook(input, 'inbox');
      const outcome = await this.#afterTurn(await turn);
      this.#busy = false; // the turn is over: the status events below may be what ends a wait on isIdle
      this.lastOutcome = outcome;
      if (outcome.kind === 'end_turn' || outcome.kind === 'stopped') this.lastText = outcome.text;
      if (outcome.kind === 'failed' || outcome.kind === 'turn_limit') {
        await this.setStatus('failed', { error: this.describeOutcome(outcome) });
      } else {
        await this.setStatus('idle', { reason: waitingSince('waiting for messages') });
      }
      const ended: LeadTurn = { input: prompt !== undefined ? 'prompt' : 'inbox', outcome };
      for (const listener of this.#turnListeners) listener(ended);
    }
  }
}
