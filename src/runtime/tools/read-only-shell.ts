// Decides whether a shell command only reads, for agents in plan mode. Conservative on
// purpose: anything it cannot be sure of (redirection, substitution, unknown programs) is refused.

const READ_ONLY_PROGRAMS = new Set([
  'ls', 'cat', 'head', 'tail', 'wc', 'grep', 'rg', 'egrep', 'fgrep', 'pwd', 'echo', 'printf', 'tree', 'stat',
  'file', 'du', 'df', 'sort', 'uniq', 'cut', 'tr', 'diff', 'cmp', 'basename', 'dirname', 'realpath', 'which',
  'env', 'date', 'true', 'false', 'test', 'nl', 'column', 'jq', 'less', 'more', 'md5sum', 'sha256sum',
]);

const READ_ONLY_GIT = new Set(['status', 'log', 'diff', 'show', 'branch', 'rev-parse', 'ls-files', 'blame', 'grep', 'describe', 'shortlog']);

/** Undefined when the command only reads; otherwise why it was refused. */
export function whyNotReadOnly(command: string): string | undefined {
  if (/[<>]|`|\$\(|\$\{/.test(command)) return 'redirection and substitution are not allowed in plan mode';
  for (const segment of command.split(/\|\||&&|[|;&\n]/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    const [program, sub] = words;
    if (!program) continue;
    if (program === 'git') {
      if (!sub || !READ_ONLY_GIT.has(sub)) return `'git ${sub ?? ''}' may change the repository`;
      continue;
    }
    if (program === 'find') {
      if (words.some((w) => /^-(delete|exec|execdir|ok|okdir|fprint|fprintf|fls)$/.test(w))) return 'find with actions that run or write is not allowed';
      continue;
    }
    if (!READ_ONLY_PROGRAMS.has(program)) return `'${program}' is not on the read-only list`;
  }
  return undefined;
}
