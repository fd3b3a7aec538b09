// JSON for a jsonb column. jsonb cannot hold the character U+0000, nor half of a surrogate pair
// (both valid JSON: a command's output may carry the one, a long line cut mid-emoji the other):
// they are stored as U+FFFD instead, rather than failing the write (and with it the run).
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;
/** A \uD800–\uDFFF escape that is not half of a high+low pair (JSON.stringify escapes only lone ones). */
const LONE_SURROGATE_ESCAPE =
  /(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})/g;

/** JSON.stringify(value), with every \u0000 escape and lone surrogate turned into \ufffd. */
export function toJsonb(value: unknown): string {
  return fromJsonText(JSON.stringify(value));
}

/** The same for JSON already serialized (and perhaps scrubbed). */
export function fromJsonText(text: string): string {
  if (!text.includes('\\u')) return text;
  return text.replace(NUL_ESCAPE, '$1\\ufffd').replace(LONE_SURROGATE_ESCAPE, '$1\\ufffd');
}
