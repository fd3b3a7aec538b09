// The JSON of a tool definition, made once per definition object: a definition is made once and
// never changed (tools/registry.ts), and every model call sends every tool (~20 KB of JSON), so the
// request body (messages-request.ts) and the prompt-cache gate's key (prefix-gate.ts) reuse it.

const json = new WeakMap<object, string>();

/** JSON.stringify(value) as an element of an array writes it ('null' for what JSON has no word for). */
export function definitionJson(value: unknown): string {
  if (!value || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  let text = json.get(value);
  if (text === undefined) {
    text = JSON.stringify(value) ?? 'null';
    json.set(value, text);
  }
  return text;
}
