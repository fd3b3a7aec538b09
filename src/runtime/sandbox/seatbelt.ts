// The macOS sandbox: a sandbox-exec (Seatbelt) profile that allows everything but writes outside
// the writable roots, reads of the hidden secrets and, when asked, the network. Untested by huddle
// (no macOS in its CI); it does not hide huddle's own process the way a PID namespace does, so
// huddle's environment stays free of secrets for children there by scrubbing alone.
import type { NetworkSettings } from './options.js';

export function macosProfile(options: {
  writable: string[];
  hidden: string[];
  network: NetworkSettings | undefined;
  /** External agents' config directories: the root among the hidden, the own one readable and writable. */
  state?: { root: string | undefined; own: string[] };
  /** huddle's socket the program may connect to (inside the hidden runtime directory). */
  socket?: string;
}): string {
  const quote = (p: string) => `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny file-write*)',
    `(allow file-write* ${[...options.writable.map((w) => `(subpath ${quote(w)})`), '(literal "/dev/null")', '(literal "/dev/tty")', '(regex #"^/dev/fd/")'].join(' ')})`,
  ];
  if (options.hidden.length) lines.push(`(deny file-read* ${options.hidden.map((h) => `(subpath ${quote(h)})`).join(' ')})`);
  // Later rules win: the agent's own config directory and socket, inside what is hidden.
  if (options.state) {
    if (options.state.root) lines.push(`(deny file-read* file-write* (subpath ${quote(options.state.root)}))`);
    lines.push(`(allow file-read* file-write* ${options.state.own.map((dir) => `(subpath ${quote(dir)})`).join(' ')})`);
  }
  if (options.socket)
    lines.push(`(allow file-read* file-write* (literal ${quote(options.socket)}))`, `(allow network-outbound (literal ${quote(options.socket)}))`);
  // Lists need a proxy, which this profile does not set up: with lists, no network (the safe side).
  const lists = Boolean(options.network?.allow?.length || options.network?.deny?.length);
  if (options.network?.enabled === false || lists) lines.push('(deny network*)', '(allow network* (remote unix-socket))');
  return lines.join('\n');
}
