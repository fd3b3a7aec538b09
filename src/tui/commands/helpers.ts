// What every command file needs: name completion, argument splitting, usage and error results.
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import type { CommandContext, CommandResult, SlashCommand } from './types.js';

export const agentNames = (context: CommandContext, partial: string) => context.state.order.filter((name) => name.startsWith(partial.trim()));

export const teammateNames = (context: CommandContext, partial: string) => agentNames(context, partial).filter((name) => name !== LEAD_NAME);

/** Splits "name rest of the text" into the first word and the rest. */
export function firstWord(args: string): [string, string] {
  const trimmed = args.trim();
  const space = trimmed.search(/\s/);
  return space < 0 ? [trimmed, ''] : [trimmed.slice(0, space), trimmed.slice(space + 1).trim()];
}

/** One name and nothing else, or undefined. */
export function oneName(args: string): string | undefined {
  const words = args.trim().split(/\s+/).filter(Boolean);
  return words.length === 1 ? words[0] : undefined;
}

/** A command as typed, with its arguments: "/send NAME TEXT". */
export function commandUsage(command: SlashCommand): string {
  return `/${command.name}${command.args ? ` ${command.args}` : ''}`;
}

export function usage(command: SlashCommand): CommandResult {
  return { kind: 'error', message: `usage: ${commandUsage(command)}` };
}

/** Runs an action; its message (if any) or its error becomes the command's one-line result. */
export async function attempt(work: () => Promise<string | undefined>): Promise<CommandResult> {
  try {
    const message = await work();
    return message ? { kind: 'ok', message } : { kind: 'ok' };
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
}
