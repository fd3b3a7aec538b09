// Claude Code's model aliases (`--model opus`), resolved to the current ids huddle prices
// (pricing.ts): an alias sent verbatim is a 404 from the API and a $0 run in the record.
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  opus: 'claude-opus-4-8',
  sonnet: 'claude-sonnet-4-6',
  haiku: 'claude-haiku-4-5',
};

/** The id for an alias (`opus`, `Sonnet`); any other name is an id already and is kept as given. */
export function resolveModelAlias(name: string): string {
  return MODEL_ALIASES[name.trim().toLowerCase()] ?? name.trim();
}
