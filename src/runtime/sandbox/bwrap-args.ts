// The bubblewrap options for one command, in the order they must be applied: the whole machine
// read-only, a fresh /dev and /proc (a new PID namespace: huddle's own process, its environment
// and command line are not there to read), a private /tmp, the writable roots bound over that,
// the read-only carve-outs inside them, then the hidden secrets over everything.
import { existsSync } from 'node:fs';
import type { HiddenPath } from './hidden-paths.js';

export interface BwrapPlan {
  cwd: string;
  /** Real, existing directories bound writable (empty in read-only mode). */
  writable: string[];
  /** Existing paths inside `writable` bound read-only again. */
  readOnly: string[];
  /** Existing directories bound read-only where the private /tmp would hide them (the workspace in plan mode). */
  readable: string[];
  hidden: HiddenPath[];
  /** An empty directory of huddle's, bound read-only over hidden directories. */
  emptyDir: string;
  /** Host directory bound as /tmp; undefined: a throwaway tmpfs (read-only mode). */
  tmp: string | undefined;
  /** Host directories the private /tmp covers (PRIVATE_TMP_COVERS). */
  hostTmp: readonly string[];
  network: 'on' | 'off' | { socket: string; inside: string };
  /** External agents' config directories: the root hidden, the command's own (if any) shown writable. */
  agentState?: { root: string | undefined; own: string[] };
  /** Sockets of huddle's shown inside (in the private /tmp), and where. */
  sockets?: Array<{ host: string; inside: string }>;
  /** bwrap ≥ 0.8 with a user namespace: nested namespaces (and so un-mounting the binds) are refused. */
  userns: boolean;
  /** The program is PID 1 (see SandboxRequest.asInit). */
  asInit?: boolean;
  /** Host files shown read-only inside (SandboxRequest.files). */
  files?: ReadonlyArray<{ host: string; inside: string }>;
}

export function bwrapOptions(plan: BwrapPlan): string[] {
  // PID: huddle's own process out of sight; IPC: no SysV shared memory of host processes. (UTS and
  // cgroup namespaces would add cost and hide nothing that matters.)
  // Not --as-pid-1 (one process fewer): a namespace's init ignores SIGTERM it has no handler for, so
  // an interrupted `sleep 30; echo done` would go on to `echo done`. bwrap's own init stays PID 1.
  const args: string[] = ['--die-with-parent', '--unshare-pid', '--unshare-ipc'];
  if (plan.userns) args.push('--unshare-user', '--disable-userns');
  args.push('--cap-drop', 'ALL');
  if (plan.asInit) args.push('--as-pid-1');
  if (plan.network !== 'on') args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  if (plan.tmp) args.push('--bind', plan.tmp, '/tmp');
  else args.push('--tmpfs', '/tmp');
  // /var/tmp stays read-only (TMPDIR points at /tmp); /dev/shm is for POSIX shared memory.
  if (existsSync('/dev/shm')) args.push('--tmpfs', '/dev/shm');
  const underTmp = (p: string) => plan.hostTmp.some((t) => p === t || p.startsWith(`${t}/`));
  for (const dir of plan.readable) if (underTmp(dir) && !plan.writable.includes(dir)) args.push('--ro-bind', dir, dir);
  for (const dir of plan.writable) args.push('--bind', dir, dir);
  for (const p of plan.readOnly) args.push('--ro-bind', p, p);
  const underWritable = (p: string) => plan.writable.some((w) => p === w || p.startsWith(`${w}/`));
  for (const hidden of plan.hidden) {
    // Under the host's temp dir and not in a writable root: gone already behind the private /tmp.
    if (underTmp(hidden.path) && !underWritable(hidden.path) && !plan.readable.some((r) => hidden.path.startsWith(`${r}/`))) continue;
    // An empty read-only directory over a secret directory: one mount (a tmpfs would need a remount).
    if (hidden.kind === 'dir') args.push('--ro-bind', plan.emptyDir, hidden.path);
    else args.push('--ro-bind', '/dev/null', hidden.path);
  }
  if (plan.agentState) {
    // Over the others' directories a tmpfs (not the read-only empty directory), so that the own
    // directory's mount point can be made in it.
    if (plan.agentState.root) args.push('--tmpfs', plan.agentState.root);
    for (const dir of plan.agentState.own) args.push('--bind', dir, dir);
  }
  if (typeof plan.network === 'object') args.push('--bind', plan.network.socket, plan.network.inside);
  for (const socket of plan.sockets ?? []) args.push('--bind', socket.host, socket.inside);
  for (const file of plan.files ?? []) args.push('--ro-bind', file.host, file.inside);
  args.push('--chdir', plan.cwd);
  return args;
}

/**
 * What the private /tmp covers on the host: /tmp alone. A TMPDIR elsewhere (/var/tmp/x) stays in
 * sight, so what must be hidden there (huddle's runtime directory, other agents' private dirs) is
 * hidden there explicitly.
 */
export const PRIVATE_TMP_COVERS: readonly string[] = ['/tmp'];
