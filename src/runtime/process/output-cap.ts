// Tool output goes back into the model's context, so it has to stay bounded. The start of an
// output usually says what ran and the end says how it finished, so we keep both and cut the middle.

/** Room reserved for the marker line, so the capped text never exceeds maxChars. */
const MARKER_ROOM = 80;

/**
 * `text` unchanged when it fits in `maxChars`, otherwise its head and tail (about half each)
 * with a line in between saying how much was cut.
 */
export function capOutput(text: string, maxChars = 30_000): string {
  if (text.length <= maxChars) return text;
  return joinCut(text, 0, 0, text, maxChars);
}

/**
 * Collects a stream of unknown length in bounded memory: the first and last `maxChars`
 * characters are kept, the middle is only counted. `text()` gives the same result as
 * `capOutput` would on the whole stream.
 */
export class OutputCollector {
  #head = '';
  #tail: string[] = [];
  #tailLength = 0;
  #droppedChars = 0;
  #droppedLines = 0;

  constructor(readonly maxChars = 30_000) {}

  push(chunk: string): void {
    if (!chunk) return;
    if (this.#head.length < this.maxChars) {
      const room = this.maxChars - this.#head.length;
      this.#head += chunk.slice(0, room);
      chunk = chunk.slice(room);
      if (!chunk) return;
    }
    this.#tail.push(chunk);
    this.#tailLength += chunk.length;
    // Trim whole chunks only while what stays still covers maxChars, so the tail is exact.
    while (this.#tail.length > 1 && this.#tailLength - this.#tail[0]!.length >= this.maxChars) {
      const dropped = this.#tail.shift()!;
      this.#tailLength -= dropped.length;
      this.#droppedChars += dropped.length;
      this.#droppedLines += countNewlines(dropped);
    }
  }

  text(): string {
    const tail = this.#tail.join('');
    if (this.#droppedChars === 0) return capOutput(this.#head + tail, this.maxChars);
    return joinCut(this.#head, this.#droppedChars, this.#droppedLines, tail, this.maxChars);
  }
}

/**
 * Joins the start of `head` and the end of `tail` around a marker. `missingChars`/`missingLines`
 * count what lies between `head` and `tail` and was never kept (0 when they are the same text).
 */
function joinCut(head: string, missingChars: number, missingLines: number, tail: string, maxChars: number): string {
  const budget = Math.max(2, maxChars - MARKER_ROOM);
  const headLength = Math.floor(budget / 2);
  const tailLength = budget - headLength;
  const sameText = missingChars === 0 && head === tail;

  let start = safeSlice(head, 0, Math.min(headLength, head.length));
  // Prefer cutting at line ends, unless that would throw away a large share of the budget.
  const lastNewline = start.lastIndexOf('\n');
  if (lastNewline >= start.length * 0.8) start = start.slice(0, lastNewline + 1);

  let endFrom = Math.max(sameText ? start.length : 0, tail.length - tailLength);
  const firstNewline = tail.indexOf('\n', endFrom);
  if (firstNewline !== -1 && firstNewline - endFrom <= tailLength * 0.2) endFrom = firstNewline + 1;
  const end = safeSlice(tail, endFrom, tail.length);

  let cutChars: number;
  let cutLines: number;
  if (sameText) {
    const middle = head.slice(start.length, head.length - end.length);
    cutChars = middle.length;
    cutLines = countNewlines(middle);
  } else {
    const headRest = head.slice(start.length);
    const tailRest = tail.slice(0, tail.length - end.length);
    cutChars = headRest.length + missingChars + tailRest.length;
    cutLines = countNewlines(headRest) + missingLines + countNewlines(tailRest);
  }

  const lines = cutLines > 0 ? ` (${cutLines.toLocaleString('en-US')} line${cutLines === 1 ? '' : 's'})` : '';
  const marker = `[… ${cutChars.toLocaleString('en-US')} characters${lines} cut from the middle …]`;
  return `${start}${start.endsWith('\n') ? '' : '\n'}${marker}\n${end}`;
}

/** A slice that does not split a surrogate pair at either end. */
function safeSlice(text: string, from: number, to: number): string {
  if (from > 0 && from < text.length && isLowSurrogate(text.charCodeAt(from))) from += 1;
  if (to > 0 && to < text.length && isLowSurrogate(text.charCodeAt(to))) to -= 1;
  return text.slice(from, Math.max(from, to));
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count += 1;
  return count;
}
