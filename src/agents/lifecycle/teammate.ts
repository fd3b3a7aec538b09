// A teammate's lifecycle (docs/contract.md#protocols): WORK, then IDLE until an inbox message or a claimable
// task wakes it (events, not polling), until the idle timeout shuts it down. An approved
// shutdown ends the loop at the end of the current tool call.
import { Agent, type AgentSpec } from '../loop/agent.js';
import type { TurnOutcome, TurnSource } from '../loop/agent-loop.js';
import { autoClaimTurn } from '../prompts/prompts.js';
import { fill } from '../prompts/templates.js';
import { freshTaskTurn, rememberWork, TASK_MEMORY_ENTRIES, type TaskMemoryEntry } from '../prompts/task-memory.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { formatDuration } from './protocols.js';
import { onTask, waitingSince } from '../loop/liveness.js';
import { isReviewerRole, reviewMaxRounds, reviewRequestedTurn } from '../tools/review-tools.js';
import type { TeamContext } from '../team-context.js';
import { MAX_HOOK_CONTINUATIONS } from '../tools/team-hooks.js';
import type { Message } from '../../runtime/store/bus.js';
import type { ToolRegistry } from '../../runtime/tools/registry.js';
import type { WorktreeInfo } from '../../runtime/workspace/worktree.js';
import type { RoleDefinition } from './roles.js';
import type { AgentKind, LaunchSpec } from '../external/launch.js';

/** What a teammate is started with, on spawn and on resume. */
export interface TeammateStart {
  name: string;
  role: string;
  model: string;
  roleDef: RoleDefinition | undefined;
  worktree: WorktreeInfo | undefined;
  planModeRequired: boolean;
  /** Who spawned it (the lead, or the person: 'user'). */
  spawnedBy?: string;
  /** An external agent CLI runs it (agents/external/); absent: huddle's own loop. */
  agent?: AgentKind | undefined;
  /** The model named for its CLI (absent: the CLI's own default). */
  agentModel?: string | undefined;
  /** Its CLI's session, to continue on resume. */
  agentSession?: string | undefined;
  /** Its program, resolved on spawn (resolved again on resume). */
  launch?: LaunchSpec | undefined;
}

export interface TeammateSpec extends AgentSpec {
  prompt: string;
  planModeRequired: boolean;
  /** The full tool set, granted once a plan is approved (plan mode starts read-only). */
  fullTools?: ToolRegistry;
  /** A teammate brought back by a resume (resume.ts), its transcript rebuilt before it starts. */
  resume?: TeammateResume;
  /** Who spawned it: the lead, or the person ('user'); its spawn prompt's event says so. */
  spawnedBy?: string;
}

export interface TeammateResume {
  /** It was idle: it goes back to IDLE rather than running its resume turn as a new turn. */
  idle: boolean;
}

type Wake = { kind: 'input'; text: string; source: TurnSource; reason?: string; task?: number; subject?: string } | { kind: 'timeout' } | { kind: 'stopped' };

export class Teammate extends Agent {
  /** The first turn's input: the spawn prompt, or (set before start) the resume turn. */
  prompt: string;
  /** What it was made from: /restart starts a fresh loop from the same spec (restart.ts). */
  readonly spec: TeammateSpec;
  /** True while the teammate may only read (plan mode before approval). */
  planPending: boolean;
  /** A plan was sent and the teammate waits for the lead's answer. */
  awaitingPlanDecision = false;
  readonly done: Promise<void>;
  #fullTools: ToolRegistry | undefined;
  #stopController = new AbortController();
  #resolveDone!: () => void;
  #started = false;
  #finished = false;
  #idleRequested = false;
  #suspended = false;
  /** Said idle (or waiting) in this IDLE: it says `working` before it takes anything. */
  #resting = false;
  /**
   * Interrupted (by the person, or the watchdog): it takes no new task from the board until a
   * message comes (what the person or the lead says next), so an interrupt is not followed at once
   * by other work; the task it was on stays its own.
   */
  #held = false;
  /** Resumed idle: the first turn is skipped, the teammate waits for work. */
  #resumeIdle: boolean;
  #resumed: boolean;
  /** The task it works on ("#3 Write the parser"), for its memory when it takes the next. */
  #onTask: string | undefined;
  /** Its memory of earlier tasks, carried into each fresh context (task-memory.ts). */
  readonly #memory: TaskMemoryEntry[] = [];

  constructor(ctx: TeamContext, spec: TeammateSpec) {
    super(ctx, spec);
    this.spec = spec;
    this.prompt = spec.prompt;
    this.planPending = spec.planModeRequired;
    this.#fullTools = spec.fullTools;
    this.#resumed = spec.resume !== undefined;
    this.#resumeIdle = spec.resume?.idle ?? false;
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
  }

  /** False for a teammate that never takes tasks from the board by itself (a program in a PTY). */
  get claimsTasks(): boolean {
    return true;
  }

  /** Interrupted, and waiting for a message before it takes work from the board again. */
  get held(): boolean {
    return this.#held;
  }

  /** A new teammate of the same kind from `spec` (/restart puts it where this one was). */
  respawn(spec: TeammateSpec): Teammate {
    return new Teammate(this.ctx, spec);
  }

  /** Starts the loop in the background; `done` settles when the teammate has shut down or failed. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    void this.#run().finally(() => {
      this.#finished = true;
      this.#resolveDone();
    });
  }

  /** True once the loop has ended (shut down or failed). */
  get finished(): boolean {
    return this.#finished;
  }

  /** The idle tool: end the turn after this tool call and go IDLE. */
  requestIdle(): void {
    this.#idleRequested = true;
  }

  protected override shouldEndTurn(): boolean {
    return this.#idleRequested || super.shouldEndTurn();
  }

  /** Asks the loop to end after the current tool call (an approved shutdown). */
  requestStop(reason: string): void {
    this.stopReason ??= reason;
    this.#stopController.abort();
  }

  /** Stops at once: interrupts the model call or tool in flight. */
  stopNow(reason: string): void {
    this.requestStop(reason);
    this.loop.interrupt();
  }

  /**
   * Stops at once but leaves its status as it is (not `shutdown`): the team is left to be resumed
   * (a headless run interrupted by Ctrl+C).
   */
  suspend(reason: string): void {
    this.#suspended = true;
    this.stopNow(reason);
  }

  /** The lead approved the plan: the teammate gets its full tools. */
  approvePlan(): void {
    this.planPending = false;
    this.awaitingPlanDecision = false;
    if (this.#fullTools) {
      const tools = this.loop.tools;
      for (const name of tools.names) tools.remove(name);
      for (const name of this.#fullTools.names) tools.add(this.#fullTools.get(name)!);
    }
  }

  async #run(): Promise<void> {
    let input: string | undefined = this.prompt;
    let source: TurnSource = this.#resumed ? 'system' : 'spawn';
    /** Turns in a row a TeammateIdle hook kept it from idling. */
    let kept = 0;
    let afterLook = false;
    /** Whether any turn ran (or, resumed idle, was taken as run). */
    let turned = false;
    try {
      await this.setStatus('working');
      while (input !== undefined && !this.stopping) {
        this.#idleRequested = false;
        // A teammate resumed idle has its resume turn in its transcript already: it waits for work.
        const by = source === 'spawn' ? this.spec.spawnedBy : undefined;
        turned = true;
        // A turn an IDLE look started (afterLook) needs no second look at the inbox before its first call.
        const outcome: TurnOutcome | undefined = this.#resumeIdle
          ? undefined
          : afterLook
            ? await this.runTurnAfterLook(input, source, by)
            : await this.loop.runTurn(input, source, by);
        this.#resumeIdle = false;
        if (outcome?.kind === 'interrupted') this.#held = true;
        if (outcome?.kind === 'failed' || outcome?.kind === 'turn_limit') {
          const error = this.describeOutcome(outcome);
          // The lead hears of it first: the status change may end a headless run, which must not
          // end before the lead has read why.
          await this.#tellLead(fill('message-teammate-failed', { teammate: this.name, error })).catch(() => undefined);
          await this.setStatus('failed', { error });
          return;
        }
        if (this.stopping) break;
        const reason: string | undefined = outcome && !this.awaitingPlanDecision ? await this.#idleHook(kept) : undefined;
        if (reason !== undefined) {
          kept += 1;
          input = `A TeammateIdle hook kept you from going idle: ${reason}`;
          source = 'system';
          afterLook = false;
          continue;
        }
        kept = 0;
        const wake = await this.#idle();
        if (wake.kind !== 'input') {
          if (wake.kind === 'timeout') this.stopReason ??= `idle for ${formatDuration(this.ctx.config.idleTimeoutMs)}`;
          break;
        }
        // Liveness: the roster says which task it took (liveness.ts).
        await this.setStatus('working', wake.reason ? { reason: wake.reason, task: wake.task } : {});
        input = wake.subject !== undefined ? this.#startTask(wake.subject, wake.text) : wake.text;
        source = wake.source;
        afterLook = true;
      }
      if (!this.#suspended) await this.setStatus('shutdown', { reason: this.stopReason ?? 'stopped' });
      // Suspended before its first turn ran (spawned in the moment a run was stopped): its spawn prompt goes into
      // the record all the same, so that a resume gives it back its instructions rather than a bare resume turn.
      else if (!this.#resumed && !turned && this.prompt) {
        this.events.emit('prompt', { text: this.prompt, source: 'spawn', ...(this.spec.spawnedBy ? { by: this.spec.spawnedBy } : {}) });
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.events.emit('error', { message, fatal: true });
      // Telling the lead is best effort: it may be gone; the failure is in the roster and the log.
      await this.#tellLead(fill('message-teammate-failed', { teammate: this.name, error: message })).catch(() => undefined);
      // A status is best effort: the work goes on whether the roster took it or not.
      await this.setStatus('failed', { error: message }).catch(() => undefined);
    }
  }

  /**
   * IDLE: wait for a message or a claimable task; `waiting` instead while a plan is being decided.
   * The status says idle (or waiting) only while nothing is in reach: a teammate that sees a
   * message or a claimable task is `working` before it takes it, so the team never looks settled
   * (Team.isSettled) while work changes hands. A message comes first, and one look at the inbox
   * both sees and takes it (beforeTaking says `working` in between).
   */
  async #idle(): Promise<Wake> {
    const waitingForPlan = this.awaitingPlanDecision;
    // The idle timeout counts from when the teammate says it is idle (the status is written), so a
    // slow write never shortens the time it waits for work.
    let deadline = Infinity;
    this.#resting = false;
    try {
      for (;;) {
        if (this.stopping) return { kind: 'stopped' };
        const inbox = await this.deliverInbox();
        if (inbox) {
          this.#held = false;
          return { kind: 'input', text: inbox, source: 'inbox' };
        }
        let tried = false;
        if (await this.#taskInReach(waitingForPlan)) {
          tried = true;
          await this.beforeTaking();
          if (isReviewerRole(this.role)) {
            // Reviewers take work waiting in review, never pending tasks.
            const task = await this.ctx.board.claimReview(this.name).catch(() => undefined);
            if (task)
              return {
                kind: 'input',
                text: reviewRequestedTurn(task, reviewMaxRounds(this.ctx)),
                source: 'auto_claim',
                reason: onTask(task, 'review'),
                task: task.id,
                subject: `review of #${task.id} ${task.subject}`,
              };
          } else {
            // Nothing claimable right now (or the board is busy): the teammate looks again when woken.
            const task = await this.ctx.board.claimNext(this.name).catch(() => undefined);
            if (task)
              return {
                kind: 'input',
                text: autoClaimTurn(task),
                source: 'auto_claim',
                reason: onTask(task),
                task: task.id,
                subject: `#${task.id} ${task.subject}`,
              };
          }
        }
        if (!this.#resting) {
          this.#resting = true;
          if (waitingForPlan) await this.setStatus('waiting', { reason: 'plan approval' });
          else {
            await this.setStatus('idle', { reason: waitingSince(this.#held ? 'waiting for a message' : 'waiting for work') });
            deadline = Date.now() + this.ctx.config.idleTimeoutMs;
          }
          // Look again (something may have come while the status was written), unless a take just
          // failed (another claimer won): then wait for the next change rather than spin.
          if (!tried) continue;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0) return { kind: 'timeout' };
        await this.inbox.wait({ signal: this.#stopController.signal, timeoutMs: remaining, wakeOn: [(wake) => this.ctx.board.onChange(wake)] });
      }
    } finally {
      this.#resting = false;
    }
  }

  /**
   * A task taken from the board starts from a fresh context (docs/contract.md#injected-turns),
   * unless freshContextPerTask is off or an external CLI keeps its own: the transcript is reset
   * (a `context_reset`, so a resume sees the same) and the task's turn carries the spawn
   * assignment and a short memory of the earlier tasks, so its input does not grow with them.
   */
  #startTask(subject: string, taskTurn: string): string {
    const previous = this.#onTask;
    this.#onTask = subject;
    if (this.ctx.config.freshContextPerTask === false || this.spec.makeLoop !== undefined || this.loop.messages.length === 0) return taskTurn;
    // Resumed, its context holds the resume turn (where the work stood), which no memory here replaces.
    if (previous === undefined && this.#resumed) return taskTurn;
    this.#memory.push(rememberWork(previous ?? 'your first assignment', this.loop.messages));
    if (this.#memory.length > TASK_MEMORY_ENTRIES) this.#memory.shift();
    this.events.emit('context_reset', { reason: 'new_task' });
    const turn = freshTaskTurn(this.spec.prompt, this.#memory, taskTurn);
    // How full the context is now: the trimming and compaction rules must not act on the old one.
    this.loop.totals.contextTokens = Math.ceil(turn.length / 4);
    return turn;
  }

  /** Resting, it says `working` again before it takes a message or a task (the inbox calls this between its peek and its ack). */
  protected override async beforeTaking(): Promise<void> {
    if (!this.#resting) return;
    this.#resting = false;
    await this.setStatus('working');
  }

  /**
   * TeammateIdle hooks before the teammate rests (docs/contract.md#hooks): a block keeps it working, with
   * the reason as its next turn, a few times in a row at most. Undefined: it may go idle.
   */
  async #idleHook(kept: number): Promise<string | undefined> {
    const hooks = this.ctx.hooks;
    if (!hooks?.has('TeammateIdle')) return undefined;
    const outcome = await hooks.run(
      this.events,
      { hook_event_name: 'TeammateIdle', teammate_name: this.name, team_name: this.ctx.teamName },
      { cwd: this.loop.workspace.root },
    );
    if (!outcome.blocked || outcome.stop || this.stopping) return undefined;
    if (kept >= MAX_HOOK_CONTINUATIONS) {
      this.events.emit('warning', { message: `a TeammateIdle hook kept ${this.name} working ${kept} times in a row; it goes idle now`, hook: 'TeammateIdle' });
      return undefined;
    }
    return outcome.reason ?? 'a TeammateIdle hook asked you to keep working';
  }

  /** A look that takes nothing: (unless waiting on a plan, or held) a task claimNext or claimReview would take. */
  async #taskInReach(waitingForPlan: boolean): Promise<boolean> {
    if (waitingForPlan || this.#held) return false;
    if (isReviewerRole(this.role)) return (await this.ctx.board.reviewable(this.name)).length > 0;
    if (!this.claimsTasks) return false;
    // A pending task assigned to this teammate counts too (claimNext takes those), found without listing the board.
    return this.ctx.board.hasClaimable(this.name);
  }

  /** An answer to the plan, approving or not, ends the wait for it (a rejected plan is revised and sent again). */
  protected override onDelivered(messages: Message[]): void {
    if (messages.some((message) => message.type === 'plan_approval_response')) this.awaitingPlanDecision = false;
  }

  async #tellLead(content: string): Promise<void> {
    await this.ctx.bus.send({ type: 'message', from: 'huddle', to: LEAD_NAME, content });
  }
}
