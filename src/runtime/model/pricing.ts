// Dollar cost of a model call from its token usage. Prices are US dollars per million tokens,
// matched by model-id prefix so dated ids (claude-sonnet-4-5-20250929) find their family.
// Cache writes cost 1.25x input (5-minute TTL) or 2x (1-hour); cache reads 0.1x input.

export interface Price {
  input: number;
  output: number;
}

const PRICES: Array<[prefix: string, price: Price]> = [
  ['claude-opus-4-1', { input: 15, output: 75 }],
  ['claude-opus-4-0', { input: 15, output: 75 }],
  ['claude-opus-4-2', { input: 15, output: 75 }],
  ['claude-3-opus', { input: 15, output: 75 }],
  ['claude-opus', { input: 5, output: 25 }],
  ['claude-sonnet', { input: 3, output: 15 }],
  ['claude-3-7-sonnet', { input: 3, output: 15 }],
  ['claude-3-5-sonnet', { input: 3, output: 15 }],
  ['claude-haiku-4', { input: 1, output: 5 }],
  ['claude-haiku', { input: 1, output: 5 }],
  ['claude-3-5-haiku', { input: 0.8, output: 4 }],
  ['claude-3-haiku', { input: 0.25, output: 1.25 }],
];

/** The price of a model, or undefined when huddle does not know it (cost is then reported as 0). */
export function priceFor(model: string): Price | undefined {
  const id = model.toLowerCase();
  // Exact pricing for "claude-opus-4-20250514" style ids (Opus 4.0).
  if (/^claude-opus-4-\d{8}/.test(id)) return { input: 15, output: 75 };
  return PRICES.find(([prefix]) => id.startsWith(prefix))?.[1];
}

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export function emptyUsage(): TokenUsage {
  return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

export function addUsage(total: TokenUsage, more: TokenUsage): TokenUsage {
  return {
    input_tokens: total.input_tokens + more.input_tokens,
    output_tokens: total.output_tokens + more.output_tokens,
    cache_creation_input_tokens: total.cache_creation_input_tokens + more.cache_creation_input_tokens,
    cache_read_input_tokens: total.cache_read_input_tokens + more.cache_read_input_tokens,
  };
}

/** Normalises the SDK's usage object (fields may be null or absent with other servers). */
export function toTokenUsage(usage: Partial<Record<keyof TokenUsage, number | null>> | undefined): TokenUsage {
  return {
    input_tokens: usage?.input_tokens ?? 0,
    output_tokens: usage?.output_tokens ?? 0,
    cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
  };
}

export function costOf(model: string, usage: TokenUsage): number {
  const price = priceFor(model);
  if (!price) return 0;
  const perToken = (dollarsPerMillion: number) => dollarsPerMillion / 1_000_000;
  return (
    usage.input_tokens * perToken(price.input) +
    usage.cache_creation_input_tokens * perToken(price.input * 1.25) +
    usage.cache_read_input_tokens * perToken(price.input * 0.1) +
    usage.output_tokens * perToken(price.output)
  );
}
