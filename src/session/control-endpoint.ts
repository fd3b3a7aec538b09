// Where the control socket of the huddle process live in a workspace is (docs/contract.md#command-line), and the
// little protocol spoken over it: one JSON request line, one JSON response line, per connection.
// The socket acts as the person (send as "user", interrupt, teammate tools as anyone), so it lives
// in huddle's private runtime directory (owner-only, hidden from every sandboxed command: a
// read-only bind of a socket would still accept connect()), named after the workspace. The
// pointer `.team/control.json` (0600) names it and the process that owns it, so a client finds it
// without guessing, and a pointer left by a dead process is recognised as such.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { writeJsonAtomicSync } from '../runtime/fs/atomic-file.js';
import path from 'node:path';
import { huddleRuntimeDir } from '../runtime/sandbox/runtime-dir.js';
import { socketRequest } from '../runtime/process/socket-request.js';

export const CONTROL_POINTER = 'control.json';

export type ControlRequest =
  | { op: 'status' }
  | { op: 'send'; to: string; text: string }
  | { op: 'interrupt'; agent: string }
  /** What waits for the person (huddle approvals). */
  | { op: 'approvals' }
  /** The person's answer (huddle approve): `id` may be left out when exactly one thing waits; `edited` is their text of a plan. */
  | { op: 'approve'; id?: string; deny?: boolean; message?: string; edited?: string }
  /** A teammate tool that needs the live team (idle, shutdown_response, plan_approval), run as `as`: huddle's MCP server asks. */
  | { op: 'tool'; as: string; tool: string; input: unknown };

export type ControlResponse = { ok: true; result: unknown } | { ok: false; error: string; code?: 'usage' | 'failed' };

/** What `huddle status` shows of each member. */
export interface AgentStatusLine {
  name: string;
  role: string;
  status: string;
  reason?: string | undefined;
  agent: string;
  model?: string | undefined;
  task?: number | string | null | undefined;
  cost_usd: number;
  context_tokens: number;
  in_turn: boolean;
}

export interface StatusReport {
  pid: number;
  face: string;
  workspace: string;
  team: string;
  agents: AgentStatusLine[];
}

/** One line of `huddle approvals`. */
export interface WaitingLine {
  id: string;
  agent: string;
  kind: string;
  tool: string;
  summary: string;
  detail?: string | undefined;
  created_at: string;
}

export interface ControlPointer {
  pid: number;
  socket: string;
  face: string;
  started_at: string;
}

/** The socket path for a workspace's team directory, in huddle's private runtime directory (made if need be). */
export function controlSocketPath(teamDir: string): string {
  const hash = createHash('sha256').update(teamDir).digest('hex').slice(0, 16);
  return path.join(huddleRuntimeDir(), `control-${hash}.sock`);
}

export function pointerFile(teamDir: string): string {
  return path.join(teamDir, CONTROL_POINTER);
}

/** Written whole or not at all (temp file and rename): a client never reads half a pointer. */
export function writePointer(teamDir: string, pointer: ControlPointer): void {
  writeJsonAtomicSync(pointerFile(teamDir), pointer);
}

export function readPointer(teamDir: string): ControlPointer | undefined {
  try {
    const value = JSON.parse(readFileSync(pointerFile(teamDir), 'utf8')) as ControlPointer;
    return typeof value.socket === 'string' && typeof value.pid === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the pointer when it is ours (a newer process may have written its own since). */
export function removePointer(teamDir: string, pid: number): void {
  if (readPointer(teamDir)?.pid === pid) rmSync(pointerFile(teamDir), { force: true });
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** No huddle process is live in the workspace: what the client says (exit 2). */
export class NoLiveHuddleError extends Error {
  constructor(root: string) {
    super(`no huddle is running in ${root}; start one there with 'huddle' or 'huddle -p "PROMPT"' (or pass --cwd DIR)`);
    this.name = 'NoLiveHuddleError';
  }
}

/** The live process's socket, or NoLiveHuddleError. */
export function findControlSocket(root: string): string {
  const teamDir = path.join(root, '.team');
  const pointer = readPointer(teamDir);
  if (!pointer || !isProcessAlive(pointer.pid)) throw new NoLiveHuddleError(root);
  return pointer.socket;
}

/** Sends one request to the huddle live in `root`; NoLiveHuddleError when there is none. */
export function controlRequest(root: string, request: ControlRequest, options: { timeoutMs?: number } = {}): Promise<ControlResponse> {
  return socketRequest<ControlResponse>(findControlSocket(root), request, {
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    // The pointer names a socket nobody listens on: the process is gone or is closing.
    gone: () => new NoLiveHuddleError(root),
    closed: () => new Error(`huddle in ${root} closed the connection without an answer`),
    timedOut: () => new Error(`huddle in ${root} did not answer within ${options.timeoutMs} ms`),
  });
}
