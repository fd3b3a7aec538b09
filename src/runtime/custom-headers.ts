// ANTHROPIC_CUSTOM_HEADERS: headers the person's gateway wants on every model request ("Name: value"
// lines, as Claude Code and the SDK's client read it). They often carry a gateway's credential, so
// huddle adds them itself (its own requests, and the relay's for external CLIs) and no program it
// starts for an agent sees the variable (runtime/process/spawn.ts HIDDEN_ENV; docs/trust.md#secrets-and-files).

/** The headers, names lower-cased; lines without a name before a colon are skipped. */
export function customHeaders(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of (env.ANTHROPIC_CUSTOM_HEADERS ?? '').split('\n')) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    if (colon > 0 && name) headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}
