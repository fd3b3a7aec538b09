// Decides whether a shell command only reads, for agents in plan mode. The work is done by the
// command policy (command-policy.ts), which reads the command like a shell would (quotes, wrappers,
// substitutions, `bash -c`) and is conservative: what it cannot be sure of is refused.
import { readOnlyViolation } from './command-policy.js';

/** Undefined when the command only reads; otherwise why it was refused. */
export function whyNotReadOnly(command: string, root?: string): string | undefined {
  return readOnlyViolation(command, root);
}
