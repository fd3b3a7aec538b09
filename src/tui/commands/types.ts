// A slash command is a declarative object: the UI parses, completes and runs it, and
// interprets the result; a command never draws anything itself. It sees the console's state
// (lookups: agents, focus) and the intents below (ConsoleController implements them, over the
// session): never the team.
import type { ConsoleState, ViewName } from '../state/console-store.js';
import type { AgentKind } from '../../runtime/settings/schema.js';

/** What a command may ask for. */
export interface CommandIntents {
  /** /backlog: the rows read again (or, with no backlog worked through, the issues of .team/backlog/ listed as queued). */
  refreshBacklog(): void;
  spawn(name: string, role: string, prompt: string): Promise<string>;
  /** Text to an agent: a prompt for the lead, a message for a teammate. */
  sendTo(agent: string, text: string): Promise<void>;
  broadcast(text: string): Promise<number>;
  /** False when the agent is not in a turn. */
  interrupt(agent: string): boolean;
  shutdown(name: string, now: boolean): Promise<string>;
  restart(name: string): Promise<string>;
  compact(agent: string, focus?: string): Promise<string>;
  clear(agent: string): boolean;
  setModel(model: string): void;
  /** Per-task spend lines for /cost (empty when nothing is tallied). */
  taskSpendLines(): string[];
  budgetLines(agents: string[]): string[];
  /** Throws with a one-line message when the kind or amount is wrong. */
  setBudget(scope: string, kind: string, amount: string): string;
  extendBudget(scope: string | undefined, agents: string[]): string;
  mergeWorktree(name: string, pane: string): Promise<string>;
  showDiff(name: string): Promise<string>;
  removeWorktree(name: string, force: boolean): Promise<string>;
  /** One line per teammate worktree (none: an empty list). */
  listWorktrees(): Promise<string[]>;
  /** Fills the /config page (rows whose key starts with `filter`, if given); an error line when nothing matches. */
  showConfig(filter?: string): string | undefined;
  /** Fills the /mcp page. */
  showMcp(): void;
  /** The run record so far, written to .team/logs/run-<stamp>.json: its lines, for the /summary view. */
  summary(): Promise<string[]>;
  /** `/rewind`: the workspace's checkpoints, newest first, one line each. */
  listCheckpoints(): Promise<string[]>;
  /** One line describing checkpoint `id` (for the question before a rewind); undefined: no such checkpoint. */
  describeCheckpoint(id: string): Promise<string | undefined>;
  /** Puts the workspace back as checkpoint `id` had it (only `files`, if given); says what it did and how to undo it. */
  rewind(id: string, files: string[]): Promise<string>;
  /** `/best-of N TASK`: starts a best-of-N run and opens its compare view; says what it started. */
  startBestOf(options: { task: string; n: number; models?: string[]; agents?: Array<'huddle' | AgentKind>; verify?: string }): string;
  /** `/best-of`: the last run's compare view again (undefined: there is none). */
  reopenBestOf(): string | undefined;
  /** A notice in an agent's pane. */
  note(agent: string, text: string, tone?: 'info' | 'warn' | 'error'): void;
  /** The person's shell in a pane (opened when none is), with `command` typed into it. */
  shell(command?: string): Promise<string>;
  /** `/workflow run FILE`: starts a workflow on the team (one at a time). */
  runWorkflow(file: string): Promise<string>;
}

export interface CommandContext {
  controller: CommandIntents;
  state: ConsoleState;
  /** The agent whose pane is in view. */
  focus: string;
}

export type CommandResult =
  | { kind: 'ok'; message?: string }
  | { kind: 'error'; message: string }
  | { kind: 'view'; view: ViewName }
  /** Output that is a page (a table, a listing): shown as a view that fits and scrolls, never in a pane. */
  | { kind: 'page'; title: string; lines: string[] }
  | { kind: 'quit' };

export interface SlashCommand {
  name: string;
  /** Arguments as shown in /help, e.g. "NAME ROLE PROMPT". */
  args?: string;
  description: string;
  /** Completions for the argument being typed (agent names, say). */
  complete?(context: CommandContext, argsSoFar: string): string[];
  run(context: CommandContext, args: string): Promise<CommandResult> | CommandResult;
}
