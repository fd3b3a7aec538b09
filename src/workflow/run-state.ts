// Where a workflow run stands, for a face that shows it live (the console's /workflows, docs/console.md#views):
// its phases in order, each step's agent and state, when each started and ended. The runner keeps it; a face
// reads a fresh copy on every change. Tokens and cost are the agents' own (the face has them by agent name).

export type StepState = 'queued' | 'running' | 'done' | 'reused' | 'restarting' | 'failed' | 'stopped';

export interface StepView {
  name: string;
  /** The step's agent (`<phase>-<step>`). */
  agent: string;
  task?: number;
  state: StepState;
  startedAt?: number;
  endedAt?: number;
}

export interface PhaseView {
  name: string;
  kind: 'steps' | 'gate';
  state: 'waiting' | 'running' | 'done' | 'failed';
  /** A steps phase: at most this many at once. */
  concurrency?: number;
  /** A gate: what it waits for, in words. */
  gate?: string;
  /** Known once the phase starts when they come from the previous phase's results. */
  steps: StepView[];
}

export interface WorkflowRunState {
  name: string;
  state: 'running' | 'paused' | 'waiting' | 'done' | 'stopped' | 'failed';
  startedAt: number;
  endedAt?: number;
  /** How it ended, or what it waits for. */
  message?: string;
  phases: PhaseView[];
}

/** The run's state and who listens to it: every change makes a new object (a face compares by reference). */
export class RunStateBook {
  #state: WorkflowRunState;
  readonly #listeners = new Set<(state: WorkflowRunState) => void>();

  constructor(initial: WorkflowRunState) {
    this.#state = initial;
  }

  get state(): WorkflowRunState {
    return this.#state;
  }

  onChange(listener: (state: WorkflowRunState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  set(patch: Partial<WorkflowRunState>): void {
    this.#publish({ ...this.#state, ...patch });
  }

  phase(name: string, patch: Partial<PhaseView>): void {
    this.#publish({ ...this.#state, phases: this.#state.phases.map((phase) => (phase.name === name ? { ...phase, ...patch } : phase)) });
  }

  step(phase: string, step: string, patch: Partial<StepView>): void {
    this.#publish({
      ...this.#state,
      phases: this.#state.phases.map((p) => (p.name === phase ? { ...p, steps: p.steps.map((s) => (s.name === step ? { ...s, ...patch } : s)) } : p)),
    });
  }

  #publish(next: WorkflowRunState): void {
    this.#state = next;
    for (const listener of [...this.#listeners]) listener(next);
  }
}
