// An external teammate's own way into the live team: a Unix socket the huddle process running the
// team serves for that one teammate, acting as it and only as it (its tools, its inbox, its
// claims). huddle's MCP server, started by the teammate's CLI inside the sandbox, works through it
// instead of opening the team's store (which the sandbox keeps read-only). The socket is the
// capability: owner-only, in huddle's runtime directory, which every sandbox hides; the sandbox
// shows each external agent its own socket alone (at AGENT_SOCKET_INSIDE).
//
// One JSON request line, one JSON response line, per connection:
//   {"op": "list", "as"?}                 → {"ok": true, "result": [{name, description, input_schema}…]}
//   {"op": "call", "as"?, "tool", "input"} → {"ok": true, "result": {content, isError?}}
// `as`, when given, must be the channel's own teammate: nobody acts as another through it.
// A connection closed before the answer aborts the call (the MCP client cancelled it).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import type { AgentEmitter } from '../../runtime/events/events.js';
import { huddleRuntimeDir, listenPrivately, removeAtExit } from '../../runtime/sandbox/runtime-dir.js';
import type { ToolDefinitionParam, ToolRegistry } from '../../runtime/tools/registry.js';
import type { ToolResult } from '../../runtime/tools/types.js';
import type { Workspace } from '../../runtime/workspace/workspace.js';
import { readOneRequest, socketRequest } from '../../runtime/process/socket-request.js';

export type ChannelRequest = { op: 'list'; as?: string } | { op: 'call'; as?: string; tool: string; input: unknown };
export type ChannelResponse = { ok: true; result: unknown } | { ok: false; error: string };

const MAX_REQUEST_BYTES = 1024 * 1024;

export interface ChannelScope {
  /** The teammate the channel acts as. */
  agent: string;
  /** The tools' workspace: the agent's own (where its verify commands run), else the team's (`huddle mcp --cwd ROOT`). */
  workspace: Workspace;
  events: AgentEmitter;
}

export class AgentChannel {
  readonly socket: string;
  readonly #scope: ChannelScope;
  readonly #tools: ToolRegistry;
  #server: Server | undefined;
  readonly #connections = new Set<Socket>();
  /** Opens and closes in order (a restarted teammate opens it again while the old one closes). */
  #queue: Promise<void> = Promise.resolve();
  #lease = 0;
  /** Settles once the latest open() listens (rejects when it cannot): the program must not start before. */
  ready: Promise<void> = Promise.resolve();

  /** A channel for `scope.agent`, serving `tools` as that agent; it listens from open(). */
  constructor(scope: ChannelScope, tools: ToolRegistry) {
    // Not named after the agent: a Unix socket path has ~107 bytes to spare.
    this.socket = path.join(huddleRuntimeDir(), `agent-${process.pid}-${randomBytes(6).toString('hex')}.sock`);
    this.#scope = scope;
    this.#tools = tools;
  }

  /** Listens (again, at the same path); returns the lease close() takes. */
  open(): number {
    const lease = ++this.#lease;
    this.ready = this.#queue = this.#queue.catch(() => undefined).then(() => this.#listen());
    this.ready.catch(() => undefined); // reported to whoever awaits it (the program's start)
    return lease;
  }

  /** Stops listening, unless it was opened again since `lease` (a restart). */
  close(lease?: number): Promise<void> {
    if (lease !== undefined && lease !== this.#lease) return Promise.resolve();
    this.#queue = this.#queue.catch(() => undefined).then(() => this.#stop());
    return this.#queue;
  }

  async #listen(): Promise<void> {
    if (this.#server) return;
    const server = createServer((connection) => this.#serve(connection, this.#scope, this.#tools));
    rmSync(this.socket, { force: true });
    removeAtExit(this.socket);
    await listenPrivately(server, this.socket);
    server.unref(); // never what keeps huddle running
    this.#server = server;
  }

  async #stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    for (const connection of this.#connections) connection.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(this.socket, { force: true });
  }

  #serve(connection: Socket, scope: ChannelScope, tools: ToolRegistry): void {
    this.#connections.add(connection);
    const abort = new AbortController();
    connection.on('close', () => {
      this.#connections.delete(connection);
      abort.abort();
    });
    connection.on('error', () => undefined);
    const refuse = (error: string) => answer(connection, { ok: false, error });
    readOneRequest(
      connection,
      MAX_REQUEST_BYTES,
      (value) => {
        const request = value as ChannelRequest;
        if (request?.as !== undefined && request.as !== scope.agent) {
          return refuse(`this channel is ${scope.agent}'s: it cannot act as '${String(request.as)}' (each teammate's huddle mcp acts as that teammate alone)`);
        }
        if (request?.op === 'list') return answer(connection, { ok: true, result: tools.definitions() });
        if (request?.op !== 'call' || typeof request.tool !== 'string') return answer(connection, { ok: false, error: 'unknown request (list, call)' });
        void tools
          .run(request.tool, request.input ?? {}, { workspace: scope.workspace, agent: scope.agent, signal: abort.signal, events: scope.events })
          .then((result) => answer(connection, { ok: true, result: { content: result.content, ...(result.isError ? { isError: true } : {}) } }));
      },
      refuse,
    );
  }
}

function answer(connection: Socket, response: ChannelResponse): void {
  if (!connection.destroyed) connection.end(`${JSON.stringify(response)}\n`);
}

/** The client side (huddle's MCP server): one request over `socket`; `signal` abandons it. */
export function channelRequest(socket: string, request: ChannelRequest, signal?: AbortSignal): Promise<ChannelResponse> {
  return socketRequest<ChannelResponse>(socket, request, {
    ...(signal ? { signal } : {}),
    gone: () => new Error(`the huddle running this team is gone (${socket} does not answer)`),
    closed: () => new Error('huddle closed the connection without an answer'),
  });
}

/** The tool result from a channel's answer to a call. */
export function callResult(response: ChannelResponse): ToolResult {
  if (!response.ok) return { content: response.error, isError: true };
  return response.result as ToolResult;
}

export type { ToolDefinitionParam };
