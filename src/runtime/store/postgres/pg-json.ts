// JSON for a jsonb column. jsonb cannot hold the character U+0000 (it is valid JSON, and a command's
// output may carry it): it is stored as U+FFFD instead, rather than failing the write.
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** JSON.stringify(value), with every \u0000 escape turned into \ufffd. */
export function toJsonb(value: unknown): string {
  return fromJsonText(JSON.stringify(value));
}

/** The same for JSON already serialized (and perhaps scrubbed). */
export function fromJsonText(text: string): string {
  return text.includes('\\u0000') ? text.replace(NUL_ESCAPE, '$1\\ufffd') : text;
}
