// What a workflow module exports (docs/workflows.md): phases run in order; a phase is steps (each an
// agent with a task of its own, at most `concurrency` at once) or a gate (the person's yes, or a
// budget). What the steps of one phase produced is handed to the next. Checked here before anything
// runs: a broken module is one line, not a half-run workflow.
import * as z from 'zod';

export interface WorkflowStep {
  /** Unique in its phase: how a resumed run knows the step (letters, digits, '-' or '_'). */
  name: string;
  prompt: string;
  /** The teammate's role (default `worker`). */
  role?: string;
  /** huddle's own loop (default) or an external CLI. */
  agent?: 'huddle' | 'claude-code' | 'gemini' | 'codex' | 'opencode' | 'command';
  model?: string;
}

/** What one step produced: the result its agent gave when it completed its task. */
export interface StepResult {
  phase: string;
  step: string;
  task: number;
  result: string;
}

export type StepsOf = (previous: StepResult[], all: Record<string, StepResult[]>) => WorkflowStep[] | Promise<WorkflowStep[]>;

export interface StepsPhase {
  name: string;
  /** How many of its agents work at once (default 4). */
  concurrency?: number;
  steps: WorkflowStep[] | StepsOf;
}

export interface GatePhase {
  name: string;
  /** `person`: a question in the needs-you queue (`huddle approve`); `budgetUsd`: go on only while the run spent less. */
  gate: { person: string } | { budgetUsd: number };
}

export type WorkflowPhase = StepsPhase | GatePhase;

export interface Workflow {
  /** The run's name on the board: running the same workflow again continues it. */
  name: string;
  phases: WorkflowPhase[];
}

const NAME = /^[a-z][a-z0-9_-]*$/;
const name = (what: string) => z.string().regex(NAME, `${what} names use lowercase letters, digits, '-' or '_', starting with a letter`);

const stepSchema = z.object({
  name: name('step'),
  prompt: z.string().min(1),
  role: z.string().min(1).optional(),
  agent: z.enum(['huddle', 'claude-code', 'gemini', 'codex', 'opencode', 'command']).optional(),
  model: z.string().min(1).optional(),
});

const phaseSchema = z.union([
  z.object({
    name: name('phase'),
    concurrency: z.number().int().positive().optional(),
    steps: z.union([z.array(stepSchema), z.custom<StepsOf>((value) => typeof value === 'function', 'steps: an array or a function')]),
  }),
  z.object({ name: name('phase'), gate: z.union([z.object({ person: z.string().min(1) }), z.object({ budgetUsd: z.number().positive() })]) }),
]);

const workflowSchema = z.object({ name: name('workflow'), phases: z.array(phaseSchema).min(1) });

/** The module's default export (or `workflow` export) checked; throws one line saying what is wrong. */
export function parseWorkflow(exported: unknown): Workflow {
  const parsed = workflowSchema.safeParse(exported);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`not a workflow: ${issue.path.join('.') || 'the export'}: ${issue.message}`);
  }
  const workflow = parsed.data as Workflow;
  const phases = new Set<string>();
  for (const phase of workflow.phases) {
    if (phases.has(phase.name)) throw new Error(`not a workflow: two phases are named '${phase.name}'`);
    phases.add(phase.name);
  }
  return workflow;
}

/** A phase's steps, checked: unique names, each a valid step. */
export function checkSteps(phase: string, steps: unknown): WorkflowStep[] {
  const parsed = z.array(stepSchema).safeParse(steps);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`phase '${phase}': steps.${issue.path.join('.')}: ${issue.message}`);
  }
  const seen = new Set<string>();
  for (const step of parsed.data) {
    if (seen.has(step.name)) throw new Error(`phase '${phase}': two steps are named '${step.name}'`);
    seen.add(step.name);
  }
  return parsed.data as WorkflowStep[];
}

export function isGate(phase: WorkflowPhase): phase is GatePhase {
  return 'gate' in phase;
}
