// A whole `usage` event's fields from the three numbers a test cares about (docs/contract.md#events).
import type { EventFields } from '../../src/runtime/events/events.js';

export function usageFields(cost_usd: number, input_tokens = 1, output_tokens = 1): EventFields['usage'] {
  return {
    input_tokens,
    output_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cost_usd,
    total_cost_usd: cost_usd,
    total_input_tokens: input_tokens,
    total_output_tokens: output_tokens,
    context_tokens: input_tokens + output_tokens,
    model: 'claude-sonnet-4-6',
  };
}
