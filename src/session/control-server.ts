// The control socket of a live huddle process (docs/contract.md#command-line): the person's other shells, scripts
// and editors talk to the running team through it (`huddle status`, `send`, `interrupt`; the
// idle/shutdown/plan answers of a `huddle mcp` wired by hand). It acts as the person, so it is
// for the person's own processes only: a Unix socket, owner-only (0600), in huddle's runtime
// directory, which no sandboxed command can see (external agents reach the team through their own
// channel instead: agents/external/agent-channel.ts). One JSON request line and one JSON response
// line per connection (control-endpoint.ts). It only forwards to the session's intents: it knows
// no agents.
import { lstatSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { listenPrivately, sweepDeadSockets } from '../runtime/sandbox/runtime-dir.js';
import { controlSocketPath, readPointer, removePointer, writePointer, type ControlRequest, type ControlResponse } from './control-endpoint.js';
import { readOneRequest } from '../runtime/process/socket-request.js';
import { atExit } from '../runtime/process/at-exit.js';

/** A refusal the person or script caused (an unknown agent): the client exits 2. */
export class ControlUsageError extends Error {}

export type ControlHandler = (request: ControlRequest) => Promise<unknown>;

const MAX_REQUEST_BYTES = 1024 * 1024;

export class ControlServer {
  readonly socket: string;
  readonly #server: Server;
  readonly #teamDir: string;
  readonly #connections = new Set<Socket>();
  #closed = false;
  /** Takes #atExit off the work done at exit (once closed, nothing of this server is left to remove). */
  #cancelAtExit: () => void = () => undefined;

  private constructor(server: Server, socket: string, teamDir: string) {
    this.#server = server;
    this.socket = socket;
    this.#teamDir = teamDir;
  }

  /** Listens for the workspace whose team directory is `teamDir`; the pointer names this process. */
  static async start(teamDir: string, face: string, handle: ControlHandler): Promise<ControlServer> {
    const socket = controlSocketPath(teamDir);
    // Sockets a killed huddle left behind (this workspace's or another's) go first.
    await sweepDeadSockets();
    await clearStale(socket);
    const server = createServer((connection) => control.#serve(connection, handle));
    const control = new ControlServer(server, socket, teamDir);
    // Owner-only from the first moment: no window in which another user could connect.
    await listenPrivately(server, socket);
    // The socket must never keep a finished process alive.
    server.unref();
    writePointer(teamDir, { pid: process.pid, socket, face, started_at: new Date().toISOString() });
    // However the process ends (an error, a second Ctrl+C, process.exit), its socket and pointer go with it.
    control.#cancelAtExit = atExit(control.#atExit);
    return control;
  }

  /** At exit: the socket and pointer, if the pointer is still this process's (a later huddle may own the path now). */
  readonly #atExit = (): void => {
    if (readPointer(this.#teamDir)?.pid !== process.pid) return;
    rmSync(this.socket, { force: true });
    removePointer(this.#teamDir, process.pid);
  };

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelAtExit();
    removePointer(this.#teamDir, process.pid);
    for (const connection of this.#connections) connection.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    rmSync(this.socket, { force: true });
  }

  #serve(connection: Socket, handle: ControlHandler): void {
    this.#connections.add(connection);
    connection.on('close', () => this.#connections.delete(connection));
    connection.on('error', () => undefined);
    const refuse = (error: string) => this.#answer(connection, { ok: false, error, code: 'usage' });
    readOneRequest(
      connection,
      MAX_REQUEST_BYTES,
      (request) => {
        handle(request as ControlRequest).then(
          (result) => this.#answer(connection, { ok: true, result: result ?? null }),
          (error: unknown) =>
            this.#answer(connection, {
              ok: false,
              error: error instanceof Error ? error.message : String(error),
              code: error instanceof ControlUsageError ? 'usage' : 'failed',
            }),
        );
      },
      refuse,
    );
  }

  #answer(connection: Socket, response: ControlResponse): void {
    if (connection.destroyed) return;
    connection.end(`${JSON.stringify(response)}\n`);
  }
}

/** A socket file nobody listens on (a crashed huddle's) is removed; a live one is left alone. */
async function clearStale(socket: string): Promise<void> {
  // Nothing under that name (the usual start): nothing to probe. The probe would be this process's first socket,
  // ~3 ms of cold code before the first model request.
  if (!lstatSync(socket, { throwIfNoEntry: false })) return;
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect({ path: socket });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error(`another huddle already listens on ${socket}`);
  rmSync(socket, { force: true });
}
