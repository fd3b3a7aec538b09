// The command policy's tables: which programs only read, which run other commands (wrappers,
// shells, interpreters), and what counts as system directories, devices and program-running
// settings. Data only; command-policy.ts reads commands against it.

export const READ_ONLY_PROGRAMS = new Set([
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'grep',
  'rg',
  'egrep',
  'fgrep',
  'pwd',
  'echo',
  'printf',
  'tree',
  'stat',
  'file',
  'du',
  'df',
  'sort',
  'uniq',
  'cut',
  'tr',
  'diff',
  'cmp',
  'basename',
  'dirname',
  'realpath',
  'readlink',
  'which',
  'date',
  'true',
  'false',
  'test',
  '[',
  'nl',
  'column',
  'jq',
  'less',
  'more',
  'md5sum',
  'sha1sum',
  'sha256sum',
  'sha512sum',
  'cksum',
  'comm',
  'paste',
  'fold',
  'rev',
  'tac',
  'od',
  'hexdump',
  'strings',
  'seq',
  'expr',
  'whoami',
  'id',
  'uname',
  'printenv',
  'env',
  'type',
  'cd',
  'pushd',
  'popd',
  'sleep',
  'base64',
]);

export const READ_ONLY_GIT = new Set([
  'status',
  'log',
  'diff',
  'show',
  'branch',
  'rev-parse',
  'ls-files',
  'blame',
  'grep',
  'describe',
  'shortlog',
  'cat-file',
  'ls-tree',
  'merge-base',
  'name-rev',
  'rev-list',
  'show-ref',
  'for-each-ref',
  'whatchanged',
  'version',
]);

/** Programs that run the rest of their words as a command; value: options that take an argument. */
export const WRAPPERS: Record<string, { valued: Set<string>; stopAtFirstWord?: boolean }> = {
  command: { valued: new Set() },
  builtin: { valued: new Set() },
  exec: { valued: new Set(['-a']) },
  nohup: { valued: new Set() },
  nice: { valued: new Set(['-n', '--adjustment']) },
  time: { valued: new Set(['-f', '--format', '-o', '--output']) },
  timeout: { valued: new Set(['-k', '--kill-after', '-s', '--signal']) },
  env: { valued: new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']) },
  stdbuf: { valued: new Set(['-i', '-o', '-e']) },
  setsid: { valued: new Set() },
  ionice: { valued: new Set(['-c', '-n', '-p', '-P', '-u']) },
  chrt: { valued: new Set() },
  taskset: { valued: new Set() },
  unbuffer: { valued: new Set() },
  flock: { valued: new Set(['-w', '--timeout', '-E', '--conflict-exit-code']) },
  watch: { valued: new Set(['-n', '--interval', '-d']) },
  xargs: {
    valued: new Set([
      '-I',
      '-i',
      '-n',
      '--max-args',
      '-P',
      '--max-procs',
      '-L',
      '--max-lines',
      '-d',
      '--delimiter',
      '-s',
      '--max-chars',
      '-a',
      '--arg-file',
      '-E',
      '-e',
    ]),
  },
  npx: { valued: new Set(['-p', '--package', '-c', '--call']) },
  pnpx: { valued: new Set() },
  bunx: { valued: new Set() },
  busybox: { valued: new Set() },
  strace: { valued: new Set(['-e', '-o', '-p', '-s', '-u', '-E', '-a', '-X', '-b', '-I', '-O', '-P']) },
  ltrace: { valued: new Set(['-e', '-o', '-p', '-s', '-u', '-a', '-n']) },
};

/** git settings whose value is a command git runs (`git -c core.sshCommand='…' fetch`). */
export const GIT_COMMAND_SETTINGS =
  /^(core\.(sshcommand|pager|editor|fsmonitor|askpass)|diff\.external|sequence\.editor|credential\.helper|.*\.(textconv|command|cmd|process|clean|smudge))$/i;

/** Variables that make the command they prefix run another program (or load code): not read-only. */
export const PROGRAM_VARIABLES =
  /^(GIT_[A-Z_0-9]+|LESSOPEN|LESSCLOSE|LESSKEY|PAGER|MANPAGER|EDITOR|VISUAL|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|BASH_ENV|ENV|PROMPT_COMMAND|PS4|SHELLOPTS|BASHOPTS|PATH|IFS|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PERL5OPT|RUBYOPT|SSH_ASKPASS|SUDO_ASKPASS|TAR_OPTIONS|RIPGREP_CONFIG_PATH|GREP_OPTIONS)$/;

export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'yash', 'fish', 'csh', 'tcsh', 'rbash']);
export const INTERPRETERS = new Set(['python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'lua', 'pwsh', 'Rscript', 'deno', 'bun']);
export const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'xh', 'lwp-request']);
export const PRIVILEGE = new Set(['sudo', 'doas', 'su', 'pkexec', 'run0', 'sudoedit']);
export const POWER = new Set(['shutdown', 'reboot', 'halt', 'poweroff']);
export const POWER_VERBS = new Set([
  'poweroff',
  'reboot',
  'halt',
  'kexec',
  'suspend',
  'hibernate',
  'hybrid-sleep',
  'suspend-then-hibernate',
  'rescue',
  'emergency',
  'soft-reboot',
  'isolate',
]);
export const DISK_TOOLS = /^(mkfs(\..+)?|mke2fs|mkswap|mkdosfs|mkntfs|mkexfatfs|wipefs|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|blkdiscard)$/;
export const SYSTEM_DIRS = new Set([
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/home',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/media',
  '/mnt',
  '/opt',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/srv',
  '/sys',
  '/tmp',
  '/usr',
  '/var',
  '/snap',
  '/Users',
  '/System',
  '/Library',
  '/Applications',
  '/private',
]);
export const HARMLESS_DEVICES = /^\/dev\/(null|zero|full|random|urandom|stdin|stdout|stderr|tty|fd\/\d+|pts\/.*|shm\/.*)$/;
export const WRITE_REDIRECTS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&']);
/** find actions that run or write; everything else in a find expression only selects or prints. */
export const FIND_ACTIONS = /^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/;
/** Programs that destroy what find hands them. */
export const FIND_DELETERS = new Set(['rm', 'rimraf', 'shred', 'unlink', 'rmdir', 'truncate', 'mv', 'chmod', 'chown', 'dd', 'wipe', 'srm']);
/** find options that are not tests: an expression of only these selects everything. */
export const FIND_NON_TESTS = /^-(depth|maxdepth|mindepth|xdev|mount|follow|L|H|P|print|print0|d|daystart|noleaf|ignore_readdir_race|nowarn|warn)$/;
