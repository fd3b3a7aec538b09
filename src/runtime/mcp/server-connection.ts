// One MCP server for the whole huddle process: started once, its tools listed, calls made through
// one client; restarted with backoff when it dies (a call made meanwhile waits for it); failing to
// start is a state with a reason, never an exception for the caller.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { childEnvironment, type SpawnLike } from '../process/spawn.js';
import type { McpServerSettings } from '../settings/schema.js';
import type { JsonObjectSchema } from '../tools/types.js';
import { expandServer } from './expand.js';
import { SpawnStdioTransport } from './stdio-transport.js';
import type { McpCallResult } from './tool-result.js';

declare const __HUDDLE_VERSION__: string;
const VERSION = typeof __HUDDLE_VERSION__ === 'string' ? __HUDDLE_VERSION__ : '0.0.0-dev';

export type McpServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: JsonObjectSchema;
  /** The server marks it `readOnlyHint: true`: it does not change its environment (plan mode may use it). */
  readOnly: boolean;
}

export interface RestartPolicy {
  /** Attempts in a row before the server is given up on (each success starts the count anew). */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RESTART: RestartPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

export interface McpConnectionOptions {
  name: string;
  server: McpServerSettings;
  /** The workspace root: a stdio server's cwd. */
  cwd: string;
  /** For ${VAR} expansion and as the base of a stdio server's environment (huddle's secrets removed). */
  env: NodeJS.ProcessEnv;
  spawn: SpawnLike;
  startupTimeoutMs: number;
  toolTimeoutMs: number;
  restart?: RestartPolicy;
  /** Called on every state change (for events, and for the `/mcp` view to refresh). */
  onStateChange?: (connection: McpServerConnection) => void;
}

export class McpCallError extends Error {}

export class McpServerConnection {
  readonly name: string;
  readonly #options: McpConnectionOptions;
  #state: McpServerState = 'starting';
  #tools: McpToolInfo[] = [];
  #lastError: string | undefined;
  #restarts = 0;
  #client: Client | undefined;
  #transport: Transport | undefined;
  #waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(options: McpConnectionOptions) {
    this.name = options.name;
    this.#options = options;
  }

  get state(): McpServerState {
    return this.#state;
  }
  get tools(): readonly McpToolInfo[] {
    return this.#tools;
  }
  get lastError(): string | undefined {
    return this.#lastError;
  }
  get restarts(): number {
    return this.#restarts;
  }
  get transportKind(): 'stdio' | 'http' | 'sse' {
    const server = this.#options.server;
    return 'command' in server ? 'stdio' : server.type;
  }
  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    return this.#transport instanceof SpawnStdioTransport ? this.#transport.pid : undefined;
  }

  /** Starts the server; resolves once it is ready or has failed (see `state` and `lastError`). */
  async start(): Promise<void> {
    this.#setState('starting');
    try {
      await this.#connect();
      this.#setState('ready');
    } catch (error) {
      this.#lastError = (error as Error).message;
      this.#setState('failed');
    }
  }

  async callTool(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    await this.#whenReady(signal);
    const client = this.#client;
    if (!client) throw new McpCallError(`MCP server '${this.name}' is not running`);
    try {
      const options = { timeout: this.#options.toolTimeoutMs, resetTimeoutOnProgress: true, ...(signal ? { signal } : {}) };
      return (await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, options)) as McpCallResult;
    } catch (error) {
      if (signal?.aborted) throw new McpCallError('interrupted');
      if (this.#client !== client || this.#state !== 'ready') {
        throw new McpCallError(`MCP server '${this.name}' stopped during the call (${this.#lastError ?? 'it exited'}); it is being restarted, so try again`);
      }
      throw new McpCallError(`MCP server '${this.name}': ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.#setState('stopped');
    clearTimeout(this.#retryTimer);
    this.#rejectWaiters(new McpCallError(`MCP server '${this.name}' was stopped`));
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    await client?.close().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const server = expandServer(this.#options.server, this.#options.env);
    const transport = this.#makeTransport(server);
    const client = new Client({ name: 'huddle', version: VERSION }, { capabilities: {} });
    const timeout = this.#options.startupTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      const tools = await listAllTools(client, timeout);
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        if (this.#client !== client) return;
        this.#tools = await listAllTools(client, timeout).catch(() => this.#tools);
        this.#options.onStateChange?.(this);
      });
      this.#tools = tools;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new Error(this.#describeFailure(error as Error, transport));
    }
    if (transport instanceof SpawnStdioTransport) transport.forgetStderr();
    this.#client = client;
    this.#transport = transport;
    // Set after connecting: a close during start is a failed start, not a restart.
    client.onclose = () => this.#closed(client, transport);
  }

  #makeTransport(server: McpServerSettings): Transport {
    if ('command' in server) {
      return new SpawnStdioTransport({
        command: server.command,
        args: server.args ?? [],
        env: childEnvironment(server.env ?? {}, this.#options.env),
        cwd: this.#options.cwd,
        spawn: this.#options.spawn,
      });
    }
    const url = new URL(server.url);
    const requestInit = server.headers ? { headers: server.headers } : undefined;
    return server.type === 'sse'
      ? new SSEClientTransport(url, requestInit ? { requestInit } : undefined)
      : new StreamableHTTPClientTransport(url, requestInit ? { requestInit } : undefined);
  }

  #describeFailure(error: Error, transport: Transport): string {
    const code = (error as NodeJS.ErrnoException).code;
    const server = this.#options.server;
    if (code === 'ENOENT' && 'command' in server) return `command '${server.command}' not found`;
    let message = error.message.replace(/^MCP error -?\d+: /, '');
    if (transport instanceof SpawnStdioTransport) {
      const exit = transport.exit;
      if (exit) message = `it exited (${exit.code !== null ? `code ${exit.code}` : `signal ${exit.signal}`}) while starting`;
      const stderr = lastLine(transport.stderrTail);
      if (stderr) message += `: ${stderr}`;
    }
    return message;
  }

  #closed(client: Client, transport: Transport): void {
    if (this.#client !== client || this.#state === 'stopped') return;
    this.#client = undefined;
    this.#transport = undefined;
    const exit = transport instanceof SpawnStdioTransport ? transport.exit : undefined;
    const stderr = transport instanceof SpawnStdioTransport ? lastLine(transport.stderrTail) : '';
    this.#lastError = `it exited${exit ? ` (${exit.code !== null ? `code ${exit.code}` : `signal ${exit.signal}`})` : ''}${stderr ? `: ${stderr}` : ''}`;
    this.#setState('restarting');
    this.#scheduleRestart(1);
  }

  #scheduleRestart(attempt: number): void {
    const policy = this.#options.restart ?? DEFAULT_RESTART;
    const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    this.#retryTimer = setTimeout(async () => {
      if (this.#state === 'stopped') return;
      this.#restarts += 1;
      try {
        await this.#connect();
      } catch (error) {
        if ((this.#state as McpServerState) === 'stopped') return;
        this.#lastError = (error as Error).message;
        if (attempt >= policy.maxAttempts) {
          this.#setState('failed');
          this.#rejectWaiters(new McpCallError(`MCP server '${this.name}' could not be restarted: ${this.#lastError}`));
        } else this.#scheduleRestart(attempt + 1);
        return;
      }
      if ((this.#state as McpServerState) === 'stopped') {
        await this.#client?.close().catch(() => undefined);
        return;
      }
      this.#setState('ready');
    }, delay);
    this.#retryTimer.unref();
  }

  #whenReady(signal?: AbortSignal): Promise<void> {
    if (this.#state === 'ready') return Promise.resolve();
    if (this.#state === 'failed') return Promise.reject(new McpCallError(`MCP server '${this.name}' is not running: ${this.#lastError ?? 'it failed'}`));
    if (this.#state === 'stopped') return Promise.reject(new McpCallError(`MCP server '${this.name}' was stopped`));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => settle(new McpCallError(`MCP server '${this.name}' is still ${this.#state} after ${this.#options.startupTimeoutMs} ms`)),
        this.#options.startupTimeoutMs,
      );
      const onAbort = () => settle(new McpCallError('interrupted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const waiter = { resolve: () => settle(), reject: (error: Error) => settle(error) };
      const settle = (error?: Error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        if (error) reject(error);
        else resolve();
      };
      this.#waiters.push(waiter);
    });
  }

  #rejectWaiters(error: Error): void {
    for (const waiter of [...this.#waiters]) waiter.reject(error);
  }

  #setState(state: McpServerState): void {
    this.#state = state;
    if (state === 'ready') for (const waiter of [...this.#waiters]) waiter.resolve();
    this.#options.onStateChange?.(this);
  }
}

async function listAllTools(client: Client, timeout: number): Promise<McpToolInfo[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
    for (const tool of page.tools) {
      tools.push({
        name: tool.name,
        description: tool.description ?? tool.title ?? tool.name,
        inputSchema: { ...(tool.inputSchema as Record<string, unknown>), type: 'object' },
        readOnly: tool.annotations?.readOnlyHint === true,
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function lastLine(text: string): string {
  const line = text.trim().split('\n').at(-1)?.trim() ?? '';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
