// Runs a workflow (docs/workflows.md) on a team session. Its progress lives on the board: every step
// is a task tagged with the workflow, phase and step, assigned to the step's agent; the agent
// completes it with its result. Run again after a crash, the runner finds those tasks: a completed
// step's result is reused (its agent is not run again), a step that was under way is given to a
// new agent of the same name, which finds the task in progress and finishes it.
import { LEAD_NAME, PERSON_SENDER } from '../runtime/vocabulary.js';
import type { Task } from '../runtime/store/board.js';
import type { TeamSession } from '../session/team-session.js';
import { checkSteps, isGate, type GatePhase, type StepResult, type Workflow, type WorkflowStep } from './definition.js';
import { RunStateBook, type StepView, type WorkflowRunState } from './run-state.js';

const DEFAULT_CONCURRENCY = 4;
const GATE_STEP = 'gate';
const STEP_DONE = 'its workflow step is done';
const STOPPED = Symbol('stopped');

/** The workflow stopped before its end: `budget` (exit 3), `failed` or `stopped` by the person (exit 1); continued by running it again. */
export class WorkflowStop extends Error {
  constructor(
    message: string,
    readonly kind: 'budget' | 'failed' | 'stopped',
  ) {
    super(message);
    this.name = 'WorkflowStop';
  }
}

export interface WorkflowProgress {
  /** One line for the person (stderr). */
  say(line: string): void;
}

export class WorkflowRunner {
  readonly #session: TeamSession;
  readonly #workflow: Workflow;
  readonly #progress: WorkflowProgress;
  readonly #book: RunStateBook;
  /** Resolved by stop(): every wait of the run races it. */
  readonly #stopped: Promise<typeof STOPPED>;
  #stop!: () => void;
  #isStopped = false;
  /** While paused: resolved by resume(). */
  #paused: { promise: Promise<void>; resume: () => void } | undefined;
  /** Step agents the person asked to restart: their stop is no failure of the step. */
  readonly #restarting = new Set<string>();
  /** Step agents spawned (or found at work on a worker) and not yet stopped: those a restart can reach. */
  readonly #atWork = new Set<string>();

  constructor(session: TeamSession, workflow: Workflow, progress: WorkflowProgress) {
    this.#session = session;
    this.#workflow = workflow;
    this.#progress = progress;
    this.#stopped = new Promise((resolve) => (this.#stop = () => resolve(STOPPED)));
    this.#book = new RunStateBook({
      name: workflow.name,
      state: 'running',
      startedAt: Date.now(),
      phases: workflow.phases.map((phase) =>
        isGate(phase)
          ? {
              name: phase.name,
              kind: 'gate',
              state: 'waiting',
              gate: 'person' in phase.gate ? phase.gate.person : `budget $${phase.gate.budgetUsd}`,
              steps: [],
            }
          : {
              name: phase.name,
              kind: 'steps',
              state: 'waiting',
              concurrency: phase.concurrency ?? DEFAULT_CONCURRENCY,
              steps: Array.isArray(phase.steps) ? phase.steps.map((step) => queuedStep(phase.name, step.name)) : [],
            },
      ),
    });
  }

  get name(): string {
    return this.#workflow.name;
  }

  /** Where the run stands now (a new object on every change). */
  get state(): WorkflowRunState {
    return this.#book.state;
  }

  onChange(listener: (state: WorkflowRunState) => void): () => void {
    return this.#book.onChange(listener);
  }

  /** Runs every phase in order; resolves with each phase's results. */
  async run(): Promise<Record<string, StepResult[]>> {
    try {
      const results = await this.#run();
      this.#book.set({ state: 'done', endedAt: Date.now(), message: 'done' });
      return results;
    } catch (error) {
      const stopped = error instanceof WorkflowStop && error.kind === 'stopped';
      this.#book.set({ state: stopped ? 'stopped' : 'failed', endedAt: Date.now(), message: (error as Error).message });
      throw error;
    }
  }

  /** No new step starts until resume(); the steps at work go on. */
  pause(): boolean {
    if (this.#paused || this.#isStopped || this.#ended()) return false;
    let resume!: () => void;
    const promise = new Promise<void>((resolve) => (resume = resolve));
    this.#paused = { promise, resume };
    this.#book.set({ state: 'paused' });
    this.#progress.say('paused: no new step starts until it is resumed');
    return true;
  }

  resume(): boolean {
    const paused = this.#paused;
    if (!paused) return false;
    this.#paused = undefined;
    this.#book.set({ state: 'running' });
    paused.resume();
    this.#progress.say('resumed');
    return true;
  }

  /**
   * Ends the run now: its steps' agents are stopped, their tasks stay in progress on the board, so running the
   * workflow again gives them to new agents (docs/workflows.md#running-it-again).
   */
  async stop(): Promise<boolean> {
    if (this.#isStopped || this.#ended()) return false;
    this.#isStopped = true;
    this.#stop();
    const running = this.#book.state.phases.flatMap((phase) => phase.steps.filter((step) => step.state === 'running' || step.state === 'restarting'));
    // One that already stopped on its own has nothing to stop.
    await Promise.all(
      running.map((step) => this.#session.shutdown(step.agent, { now: true, reason: 'its workflow was stopped by the person' }).catch(() => undefined)),
    );
    return true;
  }

  /** Stops a running step's agent and gives its task to a new agent of the same name, which is told the first was cut short. */
  async restart(agent: string): Promise<boolean> {
    const step = this.#book.state.phases.flatMap((phase) => phase.steps).find((s) => s.agent === agent);
    if (!step || step.state !== 'running' || !this.#atWork.has(agent) || this.#isStopped) return false;
    this.#restarting.add(agent);
    await this.#session.shutdown(agent, { now: true, reason: 'restarted by the person' }).catch((error: Error) => {
      this.#restarting.delete(agent);
      throw error;
    });
    return true;
  }

  #ended(): boolean {
    const { state } = this.#book.state;
    return state === 'done' || state === 'failed' || state === 'stopped';
  }

  async #run(): Promise<Record<string, StepResult[]>> {
    const all: Record<string, StepResult[]> = {};
    let previous: StepResult[] = [];
    for (const phase of this.#workflow.phases) {
      if (this.#isStopped) throw stoppedByPerson();
      this.#book.phase(phase.name, { state: 'running' });
      try {
        if (isGate(phase)) {
          await this.#gate(phase);
        } else {
          const steps = checkSteps(phase.name, typeof phase.steps === 'function' ? await phase.steps(previous, all) : phase.steps);
          this.#book.phase(phase.name, { steps: steps.map((step) => queuedStep(phase.name, step.name)) });
          previous = await this.#phase(phase.name, steps, phase.concurrency ?? DEFAULT_CONCURRENCY);
          all[phase.name] = previous;
        }
      } catch (error) {
        this.#book.phase(phase.name, { state: 'failed' });
        throw error;
      }
      this.#book.phase(phase.name, { state: 'done' });
    }
    return all;
  }

  /** Resolves when the run is not paused (at once, mostly); false when it was stopped meanwhile. */
  async #unpaused(): Promise<boolean> {
    while (this.#paused && !this.#isStopped) await Promise.race([this.#paused.promise, this.#stopped]);
    return !this.#isStopped;
  }

  /** This workflow's task for a phase's step, if the board has one. */
  async #find(phase: string, step: string): Promise<Task | undefined> {
    const tasks = await this.#session.tasks();
    return tasks.find((task) => task.workflow?.name === this.#workflow.name && task.workflow.phase === phase && task.workflow.step === step);
  }

  async #phase(phase: string, steps: WorkflowStep[], concurrency: number): Promise<StepResult[]> {
    const results: StepResult[] = Array.from({ length: steps.length });
    const todo: Array<{ index: number; step: WorkflowStep; task: Task }> = [];
    for (const [index, step] of steps.entries()) {
      const agent = agentName(phase, step.name);
      const found = await this.#find(phase, step.name);
      if (found?.status === 'completed') {
        results[index] = { phase, step: step.name, task: found.id, result: found.result ?? '' };
        this.#book.step(phase, step.name, { state: 'reused', task: found.id });
        // Its agent finished the step after an earlier run was killed and is still on a worker, idle: its slot is freed.
        if (this.#session.isLive(agent)) await this.#session.shutdown(agent, { now: true, reason: STEP_DONE }).catch(() => undefined);
        continue;
      }
      // Assigned from the start: no other agent of the team claims a step's task.
      const task =
        found ??
        (await this.#session.createTask(
          {
            subject: `${this.#workflow.name}: ${phase}/${step.name}`,
            description: step.prompt,
            owner: agent,
            workflow: { name: this.#workflow.name, phase, step: step.name },
          },
          LEAD_NAME,
        ));
      this.#book.step(phase, step.name, { task: task.id });
      todo.push({ index, step, task });
    }
    const reused = steps.length - todo.length;
    this.#progress.say(
      `phase ${phase}: ${steps.length} step${steps.length === 1 ? '' : 's'}${reused ? `, ${reused} done in an earlier run (reused)` : ''}, ${Math.min(concurrency, todo.length)} at once`,
    );
    // A pool of `concurrency` runners taking steps in order; the first failure stops new ones starting.
    let failure: Error | undefined;
    const queue = [...todo];
    const slot = async () => {
      for (let next = queue.shift(); next && !failure; next = queue.shift()) {
        if (!(await this.#unpaused())) {
          failure ??= stoppedByPerson();
          break;
        }
        const { step, task } = next;
        this.#book.step(phase, step.name, { state: 'running', startedAt: Date.now() });
        try {
          results[next.index] = await this.#step(phase, step, task);
          this.#book.step(phase, step.name, { state: 'done', endedAt: Date.now() });
        } catch (error) {
          this.#book.step(phase, step.name, { state: this.#isStopped ? 'stopped' : 'failed', endedAt: Date.now() });
          failure ??= error as Error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, slot));
    if (failure) throw failure;
    return results;
  }

  /** One step: its agent spawned on its task, until the task is completed (again after a restart); then the agent is stopped. */
  async #step(phase: string, step: WorkflowStep, task: Task): Promise<StepResult> {
    const agent = agentName(phase, step.name);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attempt(phase, step, task, agent, attempt);
      } catch (error) {
        this.#atWork.delete(agent);
        if (!this.#restarting.delete(agent) || this.#isStopped) throw error;
        // Its loop ends just after it says so: the name is free again once it has.
        await this.#session.untilStopped(agent);
        this.#book.step(phase, step.name, { state: 'running' });
        this.#progress.say(`${phase}/${step.name}: restarted by the person`);
      }
    }
  }

  async #attempt(phase: string, step: WorkflowStep, task: Task, agent: string, attempt: number): Promise<StepResult> {
    const resumed = task.status === 'in_progress' || attempt > 0;
    // A killed run's agent that still works on a worker (a team on PostgreSQL) finishes its step: started again, it would do it twice.
    if (attempt === 0 && resumed && this.#session.isLive(agent)) {
      this.#progress.say(`${phase}/${step.name}: its agent from an earlier run is still at work on a worker; waiting for it`);
      this.#atWork.add(agent);
      return this.#finish(phase, step, task, agent, this.#completion(task.id, agent));
    }
    // Started for the agent (the lead's right), so it only has to complete it.
    if (task.status === 'pending' && attempt === 0) await this.#session.updateTask(task.id, { status: 'in_progress', owner: agent }, LEAD_NAME);
    // The agent of a step cut short by a killed run is on the roster still, running nowhere: its name is reused.
    await this.#session.retireStale(agent, 'its workflow run ended before its step was done');
    // Watched from before the spawn (its `shutdown` as a stale member, just above, is no stop of the new agent).
    const completed = this.#completion(task.id, agent);
    const prompt = [
      `You are step '${step.name}' of phase '${phase}' of the workflow '${this.#workflow.name}'. Task #${task.id} is yours and in progress${
        resumed ? '; an earlier attempt was cut short, so check what is already done before you start' : ''
      }.`,
      '',
      step.prompt,
      '',
      `When you are done, call task_update with task_id ${task.id}, status "completed" and result: what you found or made, for the next phase. Then end your turn.`,
    ].join('\n');
    // On a team with a worker that has a slot free, the agent runs there (agents/lifecycle/placement.ts).
    const spawned = await this.#session.spawn(agent, step.role ?? 'worker', prompt, PERSON_SENDER, {
      ...(step.agent ? { agent: step.agent } : {}),
      ...(step.model ? { model: step.model } : {}),
    });
    this.#atWork.add(agent);
    const where = / on worker (\S+)/.exec(spawned.split('\n')[0]!)?.[1];
    if (where) this.#progress.say(`${phase}/${step.name} runs on worker ${where}`);
    return this.#finish(phase, step, task, agent, completed);
  }

  /** Waits for the step's task to be completed, then stops its agent (here or on its worker): the slot goes to the next step. */
  async #finish(phase: string, step: WorkflowStep, task: Task, agent: string, completed: Promise<Task>): Promise<StepResult> {
    const done = await Promise.race([completed, this.#stopped]);
    if (done === STOPPED) throw stoppedByPerson();
    this.#atWork.delete(agent);
    // One that already stopped on its own has nothing to stop.
    await this.#session.shutdown(agent, { now: true, reason: STEP_DONE }).catch(() => undefined);
    this.#progress.say(`${phase}/${step.name} done (task #${task.id})`);
    return { phase, step: step.name, task: task.id, result: done.result ?? '' };
  }

  /** Resolves with the task once completed; rejects when its agent stops (fails or shuts down) first. */
  #completion(id: number, agent: string): Promise<Task> {
    return new Promise((resolve, reject) => {
      let over = false;
      const finish = (outcome: () => void) => {
        if (over) return;
        over = true;
        offTasks();
        offEvents();
        outcome();
      };
      const check = () => {
        void this.#session
          .tasks()
          .then((tasks) => {
            const task = tasks.find((t) => t.id === id);
            if (task?.status === 'completed') finish(() => resolve(task));
          })
          // The next board change looks again.
          .catch(() => undefined);
      };
      const offTasks = this.#session.onTasksChanged(check);
      const offEvents = this.#session.subscribe((event) => {
        if (event.type !== 'status' || event.agent !== agent || (event.status !== 'failed' && event.status !== 'shutdown')) return;
        // The board may hold the completion already (the agent stopped right after it).
        void this.#session.tasks().then(
          (tasks) => {
            const task = tasks.find((t) => t.id === id);
            if (task?.status === 'completed') finish(() => resolve(task));
            else
              finish(() =>
                reject(new WorkflowStop(`${agent} stopped (${event.status}${event.error ? `: ${event.error}` : ''}) before completing task #${id}`, 'failed')),
              );
          },
          (error: Error) => finish(() => reject(error)),
        );
      });
      check();
    });
  }

  /**
   * What the workflow's step agents spent, in every run of it (a killed one too) and on every host: their tallies in
   * the team's spend ledger, which outlives the runs. An agent is counted whole, its last words after its step too.
   */
  async #spent(): Promise<number> {
    const [tasks, ledger] = await Promise.all([this.#session.tasks(), this.#session.spendLedger()]);
    const agents = new Set(
      tasks.filter((task) => task.workflow?.name === this.#workflow.name && task.workflow.step !== GATE_STEP && task.owner).map((task) => task.owner!),
    );
    return [...agents].reduce((sum, agent) => sum + (ledger.agents[agent]?.cost_usd ?? 0), 0);
  }

  async #gate(phase: GatePhase): Promise<void> {
    const found = await this.#find(phase.name, GATE_STEP);
    if (found?.status === 'completed') {
      this.#progress.say(`gate ${phase.name}: passed in an earlier run`);
      return;
    }
    const task =
      found ??
      (await this.#session.createTask(
        {
          subject: `${this.#workflow.name}: ${phase.name} (gate)`,
          description: 'person' in phase.gate ? phase.gate.person : `budget: $${phase.gate.budgetUsd}`,
          owner: LEAD_NAME,
          workflow: { name: this.#workflow.name, phase: phase.name, step: GATE_STEP },
        },
        LEAD_NAME,
      ));
    if (task.status === 'pending') await this.#session.updateTask(task.id, { status: 'in_progress' }, LEAD_NAME);
    if ('budgetUsd' in phase.gate) {
      const spent = await this.#spent();
      if (spent > phase.gate.budgetUsd) {
        throw new WorkflowStop(
          `gate ${phase.name}: the workflow spent $${spent.toFixed(4)} (this run and earlier ones), over the gate's $${phase.gate.budgetUsd}`,
          'budget',
        );
      }
      await this.#session.updateTask(task.id, { status: 'completed', result: `spent $${spent.toFixed(4)}` }, LEAD_NAME);
      return;
    }
    this.#progress.say(`gate ${phase.name}: waiting for you: ${phase.gate.person} (huddle approve, or huddle approve --deny)`);
    this.#book.set({ state: 'waiting', message: `waiting for you: ${phase.gate.person}` });
    // The queue answers only while someone may answer: the person, through `huddle approve`.
    const detach = this.#session.attachPerson();
    // Nothing else may be running while the person thinks (the control socket does not hold the process open).
    const keepAlive = setInterval(() => undefined, 60_000);
    // Stopped while it waits, the question leaves the queue (the next run asks it again).
    const withdraw = new AbortController();
    void this.#stopped.then(() => withdraw.abort());
    try {
      const outcome = await this.#session.askPerson(
        {
          agent: 'workflow',
          tool: 'workflow_gate',
          summary: phase.gate.person,
          reason: `the workflow '${this.#workflow.name}' waits at gate '${phase.name}'`,
          prefixes: [],
        },
        withdraw.signal,
      );
      if (this.#isStopped) throw stoppedByPerson();
      this.#book.set({ state: this.#paused ? 'paused' : 'running', message: undefined });
      if (outcome.kind !== 'approved') {
        throw new WorkflowStop(`gate ${phase.name}: not approved${outcome.kind === 'denied' && outcome.reason ? ` (${outcome.reason})` : ''}`, 'failed');
      }
    } finally {
      clearInterval(keepAlive);
      detach();
    }
    await this.#session.updateTask(task.id, { status: 'completed', result: 'approved' }, LEAD_NAME);
    this.#progress.say(`gate ${phase.name}: approved`);
  }
}

function queuedStep(phase: string, step: string): StepView {
  return { name: step, agent: agentName(phase, step), state: 'queued' };
}

function stoppedByPerson(): WorkflowStop {
  return new WorkflowStop('stopped by the person', 'stopped');
}

/** The step's agent: one name per phase and step, the same in every run (so a resumed step's task is still its own). */
export function agentName(phase: string, step: string): string {
  return `${phase}-${step}`;
}
