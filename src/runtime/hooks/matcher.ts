// Hook matchers, as Claude Code reads them: empty or "*" matches everything; plain names (joined by
// |) match exactly; anything else is a regular expression tested against the name. Claude Code's
// tool names also match huddle's equivalents, so existing "Write|Edit" hooks keep working.
import { CLAUDE_CODE_TOOL_NAMES } from '../vocabulary.js';

export type Matcher = (value: string | undefined) => boolean;

export class MatcherError extends Error {}

/** Compiles a matcher once; throws MatcherError (with a one-line reason) for a broken regex. */
export function compileMatcher(pattern: string | undefined): Matcher {
  const text = pattern?.trim() ?? '';
  if (text === '' || text === '*') return () => true;
  if (/^[\w-]+(\|[\w-]+)*$/.test(text)) {
    const names = new Set(text.split('|').flatMap((name) => [name, ...(CLAUDE_CODE_TOOL_NAMES[name] ? [CLAUDE_CODE_TOOL_NAMES[name]] : [])]));
    return (value) => value !== undefined && names.has(value);
  }
  let regex: RegExp;
  try {
    regex = new RegExp(text);
  } catch (error) {
    throw new MatcherError(`matcher ${JSON.stringify(text)} is not a valid regular expression (${(error as Error).message})`);
  }
  return (value) => value !== undefined && regex.test(value);
}
