// Every headless run that opened a team ends its stderr with the run record's four lines
// (src/runtime/record); tests that check what else stderr said take them off first.
import { expect } from 'vitest';

export /** stderr less the run record's block at its end ("huddle: run record: …" and the three summary lines). */
function withoutRunRecord(stderr: string): string {
  const at = stderr.lastIndexOf('huddle: run record: .team/logs/run-');
  if (at < 0) return stderr;
  const block = stderr.slice(at).trimEnd().split('\n');
  expect(block, 'the run record is four lines').toHaveLength(4);
  return stderr.slice(0, at);
}
