// What the team has spent, per agent and per task: each `usage` event's cost goes to the task its
// agent owned in progress at the time (none: "unattributed"). The contract every backend keeps
// (store/file/spend-ledger.ts today); /cost, budgets and the run record read it.

export interface SpendTally {
  cost_usd: number;
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
}

export interface TaskSpend extends SpendTally {
  subject: string;
  /** Cost per agent that worked on it. */
  agents: Record<string, number>;
}

export interface SpendFile {
  version: 1;
  agents: Record<string, SpendTally>;
  tasks: Record<string, TaskSpend>;
  unattributed: SpendTally;
}

export function emptyTally(): SpendTally {
  return { cost_usd: 0, model_calls: 0, input_tokens: 0, output_tokens: 0 };
}

export function emptySpend(): SpendFile {
  return { version: 1, agents: {}, tasks: {}, unattributed: emptyTally() };
}

/**
 * The team's spend, kept across restarts and shared by every process (and host) of the team: the
 * usage events of the hub a store was opened with are added to one tally. Budgets count from it.
 */
export interface SpendLedger {
  /**
   * The team's tally so far, from every instance, including this process's usage still being
   * stored (so a budget checked right after a model call counts it). Read it, do not change it.
   */
  readonly data: SpendFile;
  /** Lines for /cost: per task (most expensive first), then what no task owned. */
  taskLines(): string[];
  /** Resolves once every usage event seen so far is tallied and stored. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Lines for /cost: per task (most expensive first), then what no task owned. */
export function spendTaskLines(data: SpendFile): string[] {
  const tasks = Object.entries(data.tasks).sort(([, a], [, b]) => b.cost_usd - a.cost_usd);
  const lines = tasks.map(([id, task]) => {
    const who = Object.entries(task.agents)
      .map(([name, cost]) => `${name} $${cost.toFixed(4)}`)
      .join(', ');
    return `#${id} ${task.subject}: $${task.cost_usd.toFixed(4)} (${task.model_calls} calls${who ? `; ${who}` : ''})`;
  });
  const none = data.unattributed;
  if (none.model_calls > 0) lines.push(`no task: $${none.cost_usd.toFixed(4)} (${none.model_calls} calls)`);
  return lines;
}
