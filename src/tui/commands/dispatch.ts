// Parsing, completing and running a slash command line.
import { COMMANDS } from './commands.js';
import type { CommandContext, CommandResult, SlashCommand } from './types.js';

export function findCommand(name: string): SlashCommand | undefined {
  return COMMANDS.find((command) => command.name === name);
}

/** Runs "/name args"; unknown commands and thrown errors become one-line hints, never crashes. */
export async function runCommandLine(line: string, context: CommandContext): Promise<CommandResult> {
  const match = /^\/(\S*)\s*([\s\S]*)$/.exec(line.trim());
  const name = match?.[1] ?? '';
  const command = findCommand(name);
  if (!command) {
    const near = COMMANDS.filter((c) => c.name.startsWith(name.slice(0, 2))).map((c) => `/${c.name}`);
    return { kind: 'error', message: `unknown command /${name}${near.length ? ` (did you mean ${near.join(' or ')}?)` : ''}; /help lists them` };
  }
  try {
    return await command.run(context, match?.[2] ?? '');
  } catch (error) {
    return { kind: 'error', message: `/${name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * Tab completion of the input line: the command name first, then its argument.
 * Returns the completed line, or the candidates when there is more than one.
 */
export function completeLine(line: string, context: CommandContext): { line: string; candidates: string[] } {
  const nameMatch = /^\/(\S*)$/.exec(line);
  if (nameMatch) {
    const candidates = COMMANDS.map((c) => c.name).filter((n) => n.startsWith(nameMatch[1] ?? ''));
    if (candidates.length === 1) return { line: `/${candidates[0]} `, candidates };
    return { line: `/${commonPrefix(candidates) || nameMatch[1]}`, candidates: candidates.map((c) => `/${c}`) };
  }
  const argMatch = /^\/(\S+)\s+(\S*)$/.exec(line);
  const command = argMatch ? findCommand(argMatch[1] ?? '') : undefined;
  if (!argMatch || !command?.complete) return { line, candidates: [] };
  const candidates = command.complete(context, argMatch[2] ?? '');
  if (candidates.length === 1) return { line: `/${command.name} ${candidates[0]} `, candidates };
  const prefix = commonPrefix(candidates);
  return { line: prefix ? `/${command.name} ${prefix}` : line, candidates };
}

function commonPrefix(words: string[]): string {
  if (words.length === 0) return '';
  let prefix = words[0]!;
  for (const word of words) while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
