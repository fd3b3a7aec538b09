// One line made of parts that matter more or less: the parts that fit the width are kept, the
// least important dropped first, so a narrow terminal shows what counts instead of a cut-off tail.
import { truncateLine, visibleWidth } from './wrap.js';

export interface Part {
  /** Styled text of the part. */
  text: string;
  /** Higher stays longer. */
  priority: number;
}

export function fitParts(parts: readonly Part[], width: number, separator: string): string {
  const kept = parts.filter((part) => part.text !== '');
  const size = () => kept.reduce((sum, part, i) => sum + visibleWidth(part.text) + (i > 0 ? visibleWidth(separator) : 0), 0);
  while (kept.length > 1 && size() > width) {
    let lowest = 0;
    for (let i = 1; i < kept.length; i++) if (kept[i]!.priority < kept[lowest]!.priority) lowest = i;
    kept.splice(lowest, 1);
  }
  return truncateLine(kept.map((part) => part.text).join(separator), width);
}
