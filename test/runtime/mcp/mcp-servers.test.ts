// MCP servers as tools, against the real reference servers from npm (devDependencies, so they are
// always there: a missing one fails the import below rather than skipping anything).
import { spawn as nodeSpawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { formatMcpStatus, McpServers, type McpServersOptions } from '../../../src/runtime/mcp/mcp-servers.js';
import { plainSpawn, type SpawnLike } from '../../../src/runtime/process/spawn.js';
import type { McpServerSettings } from '../../../src/runtime/settings/schema.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const EVERYTHING_BIN = path.join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM_BIN = path.join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const everything: McpServerSettings = { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'huddle-mcp-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(servers: Record<string, McpServerSettings>, extra: Partial<McpServersOptions> = {}) {
  const warnings: string[] = [];
  const cwd = extra.cwd ?? tempDir();
  const mcp = await McpServers.start({ servers, cwd, onWarning: (message) => warnings.push(message), ...extra });
  cleanups.push(() => mcp.close());
  return { mcp, warnings, cwd };
}

describe('MCP servers as tools', () => {
  it("offers the everything server's tools as mcp__everything__<tool> with its own schema, and maps its results", async () => {
    const { mcp, warnings, cwd } = await start({ everything });
    expect(warnings).toEqual([]);
    const [status] = mcp.status();
    expect(status).toMatchObject({ name: 'everything', transport: 'stdio', state: 'ready', restarts: 0 });
    expect(status!.tools).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__everything__get-tiny-image']));

    const registry = new ToolRegistry(mcp.tools());
    const echoDefinition = registry.definitions().find((d) => d.name === 'mcp__everything__echo');
    expect(echoDefinition?.input_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
    const context = makeToolContext(cwd, { agent: 'lead' });

    expect(await registry.run('mcp__everything__echo', { message: 'hello from huddle' }, context)).toEqual({ content: 'Echo: hello from huddle' });
    expect(await registry.run('mcp__everything__get-sum', { a: 2, b: 3 }, context)).toEqual({ content: 'The sum of 2 and 3 is 5.' });
    // The server validates its own input; its refusal is a tool error, not a crash.
    const bad = await registry.run('mcp__everything__get-sum', { a: 'two' }, context);
    expect(bad.isError).toBe(true);

    const image = await registry.run('mcp__everything__get-tiny-image', {}, context);
    expect(image.blocks).toEqual(
      expect.arrayContaining([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: expect.stringMatching(/^[A-Za-z0-9+/=]+$/) } }]),
    );
    expect(image.content).toMatch(/\[image image\/png, [\d.]+ kB\]/);

    const links = await registry.run('mcp__everything__get-resource-links', { count: 2 }, context);
    expect(links.content).toMatch(/\[resource link\] .+: demo:\/\/resource\/\S+/);
    const embedded = await registry.run('mcp__everything__get-resource-reference', { resourceType: 'Text', resourceId: 2 }, context);
    expect(embedded.content).toMatch(/\[resource demo:\/\/resource\/\S+ \(text\/plain\)\]\n/);

    const structured = await registry.run('mcp__everything__get-structured-content', { location: 'Chicago' }, context);
    expect(JSON.parse(structured.content)).toEqual({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
    expect(formatMcpStatus(mcp.status())).toMatch(/^everything \(stdio\): ready\n {2}tools: mcp__everything__echo/);
  });

  it('runs the filesystem server on the workspace through the injected spawn', async () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'notes.txt'), 'the answer is 42\n');
    const spawned: string[] = [];
    const spawn: SpawnLike = (command, args, options) => {
      spawned.push([command, ...args].join(' '));
      return plainSpawn(command, args, options);
    };
    const { mcp, warnings } = await start({ files: { command: process.execPath, args: [FILESYSTEM_BIN, cwd] } }, { cwd, spawn });
    expect(warnings).toEqual([]);
    expect(spawned).toEqual([`${process.execPath} ${FILESYSTEM_BIN} ${cwd}`]);
    const registry = new ToolRegistry(mcp.tools());
    const context = makeToolContext(cwd);
    const read = await registry.run('mcp__files__read_text_file', { path: path.join(cwd, 'notes.txt') }, context);
    expect(read).toMatchObject({ content: expect.stringContaining('the answer is 42') });
    expect(read.isError).toBeUndefined();
    const outside = await registry.run('mcp__files__read_text_file', { path: '/etc/hostname' }, context);
    expect(outside.isError).toBe(true);
    expect(outside.content).toMatch(/outside allowed directories|Access denied/i);
  });

  it('a server that does not start is one clear warning, and the others work', async () => {
    const { mcp, warnings, cwd } = await start({
      missing: { command: 'no-such-mcp-server-binary', args: ['--stdio'] },
      crashing: { command: process.execPath, args: ['-e', 'console.error("config file not found: /nope.json"); process.exit(3)'] },
      everything,
    });
    expect(warnings).toEqual([
      "MCP server 'missing' did not start: command 'no-such-mcp-server-binary' not found; its tools are unavailable and the rest goes on",
      "MCP server 'crashing' did not start: it exited (code 3) while starting: config file not found: /nope.json; its tools are unavailable and the rest goes on",
    ]);
    expect(mcp.status().map((s) => [s.name, s.state])).toEqual([
      ['missing', 'failed'],
      ['crashing', 'failed'],
      ['everything', 'ready'],
    ]);
    const registry = new ToolRegistry(mcp.tools());
    expect(registry.names.some((name) => name.startsWith('mcp__missing__'))).toBe(false);
    expect(await registry.run('mcp__everything__echo', { message: 'still here' }, makeToolContext(cwd))).toEqual({ content: 'Echo: still here' });
    expect(await mcp.call('missing', 'anything', {})).toEqual({
      content: "MCP server 'missing' is not running: command 'no-such-mcp-server-binary' not found",
      isError: true,
    });
  });

  it('restarts a server killed mid-run; the call in flight fails, the next call works', async () => {
    const { mcp, cwd } = await start({ everything }, { restart: { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 1_000 } });
    const registry = new ToolRegistry(mcp.tools());
    const context = makeToolContext(cwd);
    const firstPid = mcp.status()[0]!.pid!;
    expect(firstPid).toBeGreaterThan(0);

    const inFlight = registry.run('mcp__everything__trigger-long-running-operation', { duration: 30, steps: 30 }, context);
    process.kill(-firstPid, 'SIGKILL');
    const cut = await inFlight;
    expect(cut.isError).toBe(true);
    expect(cut.content).toMatch(/MCP server 'everything' stopped during the call \(it exited \(signal SIGKILL\)\); it is being restarted, so try again/);

    // The next call waits for the restart instead of failing.
    expect(await registry.run('mcp__everything__echo', { message: 'after the crash' }, context)).toEqual({ content: 'Echo: after the crash' });
    const [status] = mcp.status();
    expect(status).toMatchObject({ state: 'ready', restarts: 1, lastError: 'it exited (signal SIGKILL)' });
    expect(status!.pid).not.toBe(firstPid);
  });

  it("filters tools per role, and expands ${VAR} without handing huddle's secrets to the server", async () => {
    const env = { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-secret-value', HUDDLE_TEST_TEAM: 'blue' };
    const { mcp, warnings, cwd } = await start(
      {
        everything: { ...everything, env: { TEAM_COLOUR: '${HUDDLE_TEST_TEAM}', GREETING: '${HUDDLE_TEST_UNSET:-hello}' } },
        unset: { command: process.execPath, args: ['${HUDDLE_TEST_NOT_SET_ANYWHERE}'] },
        // A repository's .mcp.json asking for huddle's key, in an argument or a default.
        leak: { command: process.execPath, args: ['-e', 'require("fs").writeFileSync("leak.txt", process.argv[1])', '${ANTHROPIC_API_KEY}'] },
        leakAgain: { command: process.execPath, args: ['-e', '0'], env: { K: '${PGPASSWORD:-none}' } },
      },
      { env },
    );
    expect(warnings).toEqual([
      "MCP server 'unset' did not start: ${HUDDLE_TEST_NOT_SET_ANYWHERE} is not set (set it, or write ${HUDDLE_TEST_NOT_SET_ANYWHERE:-default}); its tools are unavailable and the rest goes on",
      "MCP server 'leak' did not start: ${ANTHROPIC_API_KEY} is huddle's own credential and goes to no MCP server; give the server a variable of its own; its tools are unavailable and the rest goes on",
      "MCP server 'leakAgain' did not start: ${PGPASSWORD} is huddle's own credential and goes to no MCP server; give the server a variable of its own; its tools are unavailable and the rest goes on",
    ]);
    const names = (access: Parameters<McpServers['tools']>[0]) => mcp.tools(access).map((tool) => tool.name);
    expect(names({ tools: ['bash', 'mcp__everything__echo'] })).toEqual(['mcp__everything__echo']);
    expect(names({ tools: ['mcp__everything__get-*'] })).toEqual(expect.arrayContaining(['mcp__everything__get-sum', 'mcp__everything__get-env']));
    expect(names({ tools: ['mcp__everything__get-*'] })).not.toContain('mcp__everything__echo');
    expect(names({ tools: ['mcp__everything'] })).toContain('mcp__everything__echo');
    expect(names({ denyTools: ['mcp__everything__*'] })).toEqual([]);
    expect(names({ denyTools: ['mcp__everything__get-env'] })).not.toContain('mcp__everything__get-env');

    const shown = await mcp.call('everything', 'get-env', {});
    const serverEnv = JSON.parse(shown.content) as Record<string, string>;
    expect(serverEnv).toMatchObject({ TEAM_COLOUR: 'blue', GREETING: 'hello' });
    expect(serverEnv.ANTHROPIC_API_KEY).toBeUndefined();
    expect(shown.content).not.toContain('sk-ant-secret-value');
    expect(cwd).toBeTruthy();
  });

  it('talks to a streamable HTTP server', async () => {
    const { port, server } = await startHttpEverything();
    cleanups.push(() => {
      server.kill('SIGTERM');
    });
    const { mcp, warnings, cwd } = await start({
      web: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Huddle-Test': '${HUDDLE_TEST_HEADER:-1}' } },
    });
    expect(warnings).toEqual([]);
    expect(mcp.status()[0]).toMatchObject({ name: 'web', transport: 'http', state: 'ready' });
    const registry = new ToolRegistry(mcp.tools());
    expect(await registry.run('mcp__web__get-sum', { a: 40, b: 2 }, makeToolContext(cwd))).toEqual({ content: 'The sum of 40 and 2 is 42.' });
  });
});

/** The everything server's streamable HTTP transport on a free loopback port; resolves when it listens. */
async function startHttpEverything(): Promise<{ port: number; server: ChildProcess }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const server = nodeSpawn(process.execPath, [EVERYTHING_BIN, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const outcome = await new Promise<'listening' | 'exited'>((resolve) => {
      let text = '';
      server.stderr!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes(`listening on port ${port}`)) resolve('listening');
      });
      server.stdout!.resume();
      server.once('exit', () => resolve('exited'));
    });
    if (outcome === 'listening') return { port, server };
    // Another process took the port between our probe and the server's listen: try another.
    if (attempt >= 5) throw new Error('the everything server did not start listening');
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
