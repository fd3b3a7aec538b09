// How many tokens a model's context window holds: the base of the context-use percentage the
// console shows and of the compaction thresholds. The API reports the tokens a request used,
// never the limit, so huddle keeps a small table; anything it does not know gets the default.

/** The window of every current Claude model unless a 1M-token context is asked for. */
export const DEFAULT_CONTEXT_WINDOW = 200_000;

const ONE_MILLION = 1_000_000;

/** First match wins; tested against the lower-cased model id. */
const WINDOWS: Array<[pattern: RegExp, tokens: number]> = [
  // Claude Code's notation for the 1M-token context ("claude-sonnet-4-5[1m]"), which proxies
  // behind ANTHROPIC_BASE_URL understand; and ids that say so themselves.
  [/\[1m\]$/, ONE_MILLION],
  [/-1m$/, ONE_MILLION],
];

export function contextWindowFor(model: string | undefined): number {
  const id = (model ?? '').trim().toLowerCase();
  return WINDOWS.find(([pattern]) => pattern.test(id))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}

/** Tokens of a request estimated from its characters (~4 per token), when no real count is at hand. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
