// A team opened by a program (docs/library.md): a thin handle over the session core every face
// uses (src/session/team-session.ts). It adds nothing the console or `huddle -p` cannot do; it
// only names the session's lookups and intents for a program, and turns its events into iterators.
import { PERSON_SENDER } from '../runtime/vocabulary.js';
import type { TeamSession } from '../session/team-session.js';
import type { TeammateKind } from '../agents/external/launch.js';
import { EventStream } from './event-stream.js';
import { BestOfRun } from '../session/best-of-run.js';
import { pickBestOf } from '../session/best-of-pick.js';
import type {
  ApprovalDecision,
  BestOfOptions,
  BestOfRecord,
  ApprovalRequest,
  CloseOptions,
  CreateTaskOptions,
  EventOf,
  EventType,
  HuddleEvent,
  Member,
  Message,
  RunEnd,
  SpawnOptions,
  Spend,
  Task,
} from './types.js';

export class Team {
  readonly #session: TeamSession;
  readonly #stream: EventStream;
  /** Watched from the lead's start: a run that ended before anyone asked is still seen to have ended. */
  #done: Promise<RunEnd> | undefined;

  /** Made by openTeam() only. */
  private constructor(session: TeamSession) {
    this.#session = session;
    this.#stream = new EventStream(session.hub);
  }

  /** @internal How openTeam() makes one (left out of the published declarations: stripInternal). */
  static fromSession(session: TeamSession): Team {
    return new Team(session);
  }

  /** The team's name (its database schema on PostgreSQL, the workspace's otherwise). */
  get name(): string {
    return this.#session.teamName;
  }

  /** The workspace's directory. */
  get workspace(): string {
    return this.#session.workspace.root;
  }

  /** The lead's model. */
  get model(): string {
    return this.#session.model;
  }

  // ---- the lead --------------------------------------------------------------------------------

  /**
   * Starts the lead (once): from now on it runs prompts and wakes on its inbox. With `prompt`, its
   * first turn. A resumed team (`resume: true`) brings its members back first.
   */
  async start(prompt?: string): Promise<void> {
    if (!this.#done) {
      this.#done = this.#session.untilDone().then((end) => (end.kind === 'budget' ? { kind: 'budget', reason: end.stop.reason } : end));
      await this.#session.resume();
      this.#session.start();
    }
    if (prompt !== undefined) this.#session.prompt(prompt);
  }

  /** A prompt for the lead: between turns it starts the next turn; mid-turn it enters before the lead's next model call. */
  prompt(text: string): void {
    this.#session.prompt(text);
  }

  /** The lead's last text: what `huddle -p` prints. */
  leadText(): string {
    return this.#session.leadResult().text;
  }

  /**
   * Resolves when the run is over: the lead ended its turn and nobody has work within reach
   * (`settled`), or it cannot go on (docs/contract.md#exit-codes). Watched from `start()`.
   */
  untilDone(): Promise<RunEnd> {
    if (!this.#done) return Promise.reject(new Error('the lead has not started: call start() first'));
    return this.#done;
  }

  // ---- members ---------------------------------------------------------------------------------

  /** Starts a teammate, as the person: huddle's own loop or an external CLI. Resolves with huddle's one-line report. */
  spawn(options: SpawnOptions): Promise<string> {
    const { name, role, prompt, agent, ...more } = options;
    // The public AgentKind must stay within what the team can run.
    const kind: TeammateKind | undefined = agent;
    return this.#session.spawn(name, role, prompt, PERSON_SENDER, { ...more, ...(kind ? { agent: kind } : {}) });
  }

  /** The roster: every member, with role, status and why. */
  members(): Member[] {
    return this.#session.members();
  }

  /** Interrupts `name`'s turn; false when it is in no turn. */
  interrupt(name: string): boolean {
    return this.#session.interrupt(name);
  }

  /** Asks a teammate to shut down (it finishes what it is doing), or with `now` stops it at once. */
  shutdown(name: string, options: { now?: boolean } = {}): Promise<string> {
    return this.#session.shutdown(name, { now: options.now ?? false });
  }

  // ---- the board -------------------------------------------------------------------------------

  /** A task on the board, created by the person; a teammate claims it (or the lead assigns it). */
  createTask(options: CreateTaskOptions): Promise<Task> {
    const { requiresReview, ...rest } = options;
    return this.#session.createTask({ ...rest, ...(requiresReview ? { requires_review: true } : {}) });
  }

  /** Every task on the board. */
  tasks(): Promise<Task[]> {
    return this.#session.tasks();
  }

  /** The board after each change, starting with the board as it is now; ends when the team closes. Follows changes from this call on. */
  watchTasks(): AsyncGenerator<Task[], void, undefined> {
    return boardAfterChanges(this.#stream.events(), () => this.tasks());
  }

  /** Resolves with the task once `done(task)` holds (default: completed). */
  async waitForTask(id: number, done: (task: Task) => boolean = (task) => task.status === 'completed'): Promise<Task> {
    for await (const tasks of this.watchTasks()) {
      const task = tasks.find((t) => t.id === id);
      if (task && done(task)) return task;
    }
    throw new Error(`the team closed before task #${id} was done`);
  }

  // ---- messages --------------------------------------------------------------------------------

  /** A message to an agent from the person, through the bus (delivered exactly once). */
  send(to: string, text: string): Promise<Message> {
    return this.#session.send(to, text, PERSON_SENDER);
  }

  /** One message to every member; resolves with how many got it. */
  broadcast(text: string): Promise<number> {
    return this.#session.broadcast(text, PERSON_SENDER);
  }

  /** Every message sent on the team's bus from this call on (`{ to: 'lead' }`: what teammates report to the lead). Ends when the team closes. */
  messages(filter: { to?: string; from?: string } = {}): AsyncGenerator<EventOf<'message_sent'>, void, undefined> {
    return messagesOf(this.#stream.events(), filter);
  }

  // ---- events ----------------------------------------------------------------------------------

  /** Every event from this call on until the team closes (docs/contract.md#events); with `types`, only those. */
  events(): AsyncGenerator<HuddleEvent, void, undefined>;
  events<T extends EventType>(...types: T[]): AsyncGenerator<EventOf<T>, void, undefined>;
  events(...types: EventType[]): AsyncGenerator<HuddleEvent, void, undefined> {
    return ofTypes(this.#stream.events(), types);
  }

  /** Calls `listener` with each event (synchronously, as it happens); returns how to stop. */
  on(listener: (event: HuddleEvent) => void): () => void {
    return this.#session.subscribe(listener);
  }

  // ---- the person ------------------------------------------------------------------------------

  /** What waits for the person (tool calls in `ask` mode, budget stops, plans), oldest first. */
  waitingForYou(): ApprovalRequest[] {
    return this.#session.waitingForPerson();
  }

  /** Answers a request of `waitingForYou()` (`approve`, `deny`, or `always` to allow-list it); one line saying what happened. */
  approve(id: string, decision: ApprovalDecision = 'approve', reason?: string): string {
    return this.#session.answer(id, decision, reason);
  }

  // ---- best-of-N --------------------------------------------------------------------------------

  /**
   * Runs `task` on `n` candidates at once, each a teammate in its own worktree and branch; then a reviewer
   * compares their diffs and gives its verdict. Resolves with the comparison (also kept in
   * `.team/best-of/<id>.json`), its candidates waiting for `pick()`.
   */
  bestOf(options: BestOfOptions): Promise<BestOfRecord> {
    const { onProgress, ...rest } = options;
    return new BestOfRun(this.#session, { ...rest, ...(onProgress ? { say: onProgress } : {}) }).run();
  }

  /**
   * Merges candidate `choice` (its name or number; `auto`: the reviewer's pick) of best-of run `id` (default:
   * the latest) into the branch it started from, keeping uncommitted work in the workspace, and removes every
   * candidate's worktree and branch; `none` removes them all, merging nothing. Rejects with one line saying
   * why when it cannot (a conflict, an overlap with uncommitted edits), having changed nothing.
   */
  pick(choice: string, id?: number): Promise<BestOfRecord> {
    return pickBestOf(this.#session.workspace.root, choice, id);
  }

  // ---- spend and closing -----------------------------------------------------------------------

  /** What the team spent so far. */
  spend(): Spend {
    const agents = this.#session.spend();
    return { agents, costUsd: agents.reduce((sum, agent) => sum + agent.costUsd, 0) };
  }

  /** Ends the session: stops every agent and closes the team's stores (once; later calls wait for the first). */
  async close(options: CloseOptions = {}): Promise<void> {
    try {
      await this.#session.close({ reason: options.reason ?? 'closed by the program', resumable: options.resumable ?? false });
    } finally {
      this.#stream.close();
    }
  }

  /** `await using team = await openTeam(…)` closes it (finished) at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

// Generators over a stream subscribed when the method was called (a generator's body waits for its first next()).

async function* ofTypes(source: AsyncGenerator<HuddleEvent, void, undefined>, types: EventType[]): AsyncGenerator<HuddleEvent, void, undefined> {
  for await (const event of source) if (types.length === 0 || types.includes(event.type)) yield event;
}

async function* messagesOf(
  source: AsyncGenerator<HuddleEvent, void, undefined>,
  filter: { to?: string; from?: string },
): AsyncGenerator<EventOf<'message_sent'>, void, undefined> {
  for await (const event of source) {
    if (event.type !== 'message_sent') continue;
    if ((filter.to === undefined || event.to === filter.to) && (filter.from === undefined || event.from === filter.from)) yield event;
  }
}

async function* boardAfterChanges(source: AsyncGenerator<HuddleEvent, void, undefined>, read: () => Promise<Task[]>): AsyncGenerator<Task[], void, undefined> {
  try {
    yield await read();
    for await (const event of source) if (event.type === 'task') yield await read();
  } finally {
    // Stopped before reaching the loop (a break after the first board): the subscription ends too.
    await source.return(undefined);
  }
}
