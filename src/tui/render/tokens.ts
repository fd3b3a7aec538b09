// Token counts as a person reads them: 980, 12.3k, 45k, 1.2M (the roster, the status bar, the event bridge's notices).

export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}
