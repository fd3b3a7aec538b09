// The syntax of a permission rule in Claude Code's words (docs/configuration.md#permission-rules):
// `Tool` or `Tool(specifier)`. Apart from the matching (tool-rules.ts, with minimatch), so that
// checking a flag's rules at start loads no glob matcher.

export interface ToolRule {
  text: string;
  tool: string;
  specifier: string | undefined;
}

const RULE = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s;

/** `Tool` or `Tool(specifier)`; undefined when the text is neither. */
export function parseToolRule(text: string): ToolRule | undefined {
  const match = RULE.exec(text.trim());
  if (!match) return undefined;
  const specifier = match[2]?.trim();
  return { text, tool: match[1]!, specifier: specifier === '' || specifier === '*' ? undefined : specifier };
}

/** Whether `text` is a rule in Claude Code's syntax (for the settings' checks). */
export function isToolRule(text: string): boolean {
  return parseToolRule(text) !== undefined;
}
