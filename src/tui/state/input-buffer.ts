// The input line's text and cursor, as pure functions (the key dispatcher applies them).

export interface InputBuffer {
  text: string;
  cursor: number;
}

export const EMPTY_INPUT: InputBuffer = { text: '', cursor: 0 };

export function insert(buffer: InputBuffer, chunk: string): InputBuffer {
  // Terminals send Enter inside pastes as \r; keep one newline convention.
  const clean = chunk.replace(/\r\n?/g, '\n');
  return { text: buffer.text.slice(0, buffer.cursor) + clean + buffer.text.slice(buffer.cursor), cursor: buffer.cursor + clean.length };
}

export function backspace(buffer: InputBuffer): InputBuffer {
  if (buffer.cursor === 0) return buffer;
  const before = [...buffer.text.slice(0, buffer.cursor)];
  const removed = before.pop() ?? '';
  return { text: before.join('') + buffer.text.slice(buffer.cursor), cursor: buffer.cursor - removed.length };
}

export function deleteForward(buffer: InputBuffer): InputBuffer {
  if (buffer.cursor >= buffer.text.length) return buffer;
  const after = [...buffer.text.slice(buffer.cursor)];
  after.shift();
  return { text: buffer.text.slice(0, buffer.cursor) + after.join(''), cursor: buffer.cursor };
}

export function moveLeft(buffer: InputBuffer): InputBuffer {
  const before = [...buffer.text.slice(0, buffer.cursor)];
  return { ...buffer, cursor: Math.max(0, buffer.cursor - (before.at(-1)?.length ?? 0)) };
}

export function moveRight(buffer: InputBuffer): InputBuffer {
  const next = [...buffer.text.slice(buffer.cursor)][0];
  return { ...buffer, cursor: Math.min(buffer.text.length, buffer.cursor + (next?.length ?? 0)) };
}

export function home(buffer: InputBuffer): InputBuffer {
  return { ...buffer, cursor: buffer.text.lastIndexOf('\n', buffer.cursor - 1) + 1 };
}

export function end(buffer: InputBuffer): InputBuffer {
  const newline = buffer.text.indexOf('\n', buffer.cursor);
  return { ...buffer, cursor: newline < 0 ? buffer.text.length : newline };
}

export function deleteWordBack(buffer: InputBuffer): InputBuffer {
  const before = buffer.text.slice(0, buffer.cursor);
  const start = before.replace(/\S+\s*$/, '').length;
  return { text: buffer.text.slice(0, start) + buffer.text.slice(buffer.cursor), cursor: start };
}

export function setText(text: string): InputBuffer {
  return { text, cursor: text.length };
}

/** The cursor one line up (or down) in a multi-line input, at the same column where that line is long enough. */
export function lineUp(buffer: InputBuffer): InputBuffer {
  const start = buffer.text.lastIndexOf('\n', buffer.cursor - 1) + 1;
  if (start === 0) return buffer;
  const column = buffer.cursor - start;
  const previousStart = buffer.text.lastIndexOf('\n', start - 2) + 1;
  return { ...buffer, cursor: Math.min(previousStart + column, start - 1) };
}

export function lineDown(buffer: InputBuffer): InputBuffer {
  const start = buffer.text.lastIndexOf('\n', buffer.cursor - 1) + 1;
  const next = buffer.text.indexOf('\n', buffer.cursor);
  if (next < 0) return buffer;
  const column = buffer.cursor - start;
  const after = buffer.text.indexOf('\n', next + 1);
  return { ...buffer, cursor: Math.min(next + 1 + column, after < 0 ? buffer.text.length : after) };
}
