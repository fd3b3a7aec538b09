// The macOS sandbox: a sandbox-exec (Seatbelt) profile that allows everything but writes outside
// the writable roots, reads of the hidden secrets and, when asked, the network. Untested by huddle
// (no macOS in its CI); it does not hide huddle's own process the way a PID namespace does, so
// huddle's environment stays free of secrets for children there by scrubbing alone.
import type { NetworkSettings } from './options.js';

export function macosProfile(options: { writable: string[]; hidden: string[]; network: NetworkSettings | undefined }): string {
  const quote = (p: string) => `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny file-write*)',
    `(allow file-write* ${[...options.writable.map((w) => `(subpath ${quote(w)})`), '(literal "/dev/null")', '(literal "/dev/tty")', '(regex #"^/dev/fd/")'].join(' ')})`,
  ];
  if (options.hidden.length) lines.push(`(deny file-read* ${options.hidden.map((h) => `(subpath ${quote(h)})`).join(' ')})`);
  // Lists need a proxy, which this profile does not set up: with lists, no network (the safe side).
  const lists = Boolean(options.network?.allow?.length || options.network?.deny?.length);
  if (options.network?.enabled === false || lists) lines.push('(deny network*)', '(allow network* (remote unix-socket))');
  return lines.join('\n');
}
