// A slash command is a declarative object: the UI parses, completes and runs it, and
// interprets the result; a command never draws anything itself.
import type { ConsoleController } from '../console-controller.js';
import type { ConsoleState, ViewName } from '../state/console-store.js';

export interface CommandContext {
  controller: ConsoleController;
  state: ConsoleState;
  /** The agent whose pane is in view. */
  focus: string;
}

export type CommandResult =
  | { kind: 'ok'; message?: string }
  | { kind: 'error'; message: string }
  | { kind: 'view'; view: ViewName }
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
