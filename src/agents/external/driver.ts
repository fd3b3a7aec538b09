// What every external agent CLI is driven through: one user turn in, its activity out as calls on
// a TurnSink (which turns it into huddle's own events), a TurnReport at the end. One driver per
// kind: claude-code (a long-lived process in streaming mode), gemini and codex (a process per turn
// that continues its session), command (any program in a PTY).
import type { TokenUsage } from '../../runtime/model/pricing.js';
import type { AgentKind } from './launch.js';

export interface TurnSink {
  /** A whole text block of the agent (shown as it comes). */
  text(text: string): void;
  toolCall(id: string, name: string, input: unknown): void;
  toolResult(id: string, name: string, ok: boolean, content: string): void;
  /** Something worth a line in the pane and the log (a warning event). */
  notice(message: string): void;
  /** May the agent run this tool? Resolves undefined for yes, or the reason it may not. */
  permission(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<string | undefined>;
  /** The CLI's own session id, once known (kept so a resume continues it). */
  session(id: string, model?: string): void;
}

export interface TurnReport {
  /** `exited`: the program ended on its own (a command agent's shell exited). */
  outcome: 'end_turn' | 'interrupted' | 'failed' | 'exited';
  /** The final text of the turn, if any. */
  text: string;
  error?: string;
  /** What the turn cost, as the CLI reports it (absent: the CLI does not say). */
  usage?: TokenUsage;
  costUsd?: number;
  /** Tokens in the context after the turn (the last request's input and output). */
  contextTokens?: number;
  model?: string;
}

export interface ExternalDriver {
  readonly kind: AgentKind;
  /** Runs one user turn; aborting `signal` interrupts it (resolves `interrupted`). */
  runTurn(text: string, sink: TurnSink, signal: AbortSignal): Promise<TurnReport>;
  /** Forgets the CLI's session: the next turn starts a new one (/restart, /clear). */
  reset(): void;
  /** Ends the program (politely, then for good after a grace period). */
  close(): Promise<void>;
}

/** What a driver needs to start its program. */
export interface DriverSetup {
  name: string;
  /** Where it works: the workspace, or its own worktree. */
  cwd: string;
  command: string;
  /** From the settings, before huddle's own arguments. */
  args: string[];
  /** The whole environment of the program (secrets only as its own variables). */
  env: Record<string, string>;
  model: string | undefined;
  /** huddle's identity, role and project instructions for the agent. */
  instructions: string;
  /** How to start `huddle mcp --as NAME` for it. */
  mcp: { command: string; args: string[] };
  /** Its CLI's private config directory (writable inside its sandbox), if it has one. */
  configDir?: string | undefined;
  /** True when huddle's OS sandbox is around the program (its CLI's own cannot nest inside it). */
  sandboxed?: (() => boolean) | undefined;
  permissionMode: 'plan' | 'ask' | 'auto';
  /**
   * When its model is reached through huddle's relay (model-relay.ts): the variable holding its
   * stand-in key (ANTHROPIC_BASE_URL holds the relay's address), for a CLI configured to read them.
   */
  modelRelayKey?: string | undefined;
  /** A session of the CLI to continue (resume). */
  session?: string | undefined;
  /** Ends the process tree of a program started detached. */
  killGraceMs: number;
}
