// An external agent's program runs in huddle's OS sandbox (docs/contract.md#sandbox), like the commands of
// huddle's own agents: it may write its workspace (for a teammate in its own checkout: that
// checkout and its git dir, never the main one), a private TMPDIR and its CLI's own private config
// directory (which stays writable in plan mode, where everything else is read-only), cannot see
// huddle's process or the person's credentials (~/.claude, ~/.gemini, ~/.codex among them), and
// reaches the team only through its own channel (agent-channel.ts), shown inside at a fixed path.
// Everything it starts (its Bash tool, its MCP servers, huddle's MCP server) inherits all this.
// A program in a PTY (a `command` teammate) gets the same through a command line (node-pty
// passes no extra descriptor to bubblewrap).
import path from 'node:path';
import type { SpawnOptions } from 'node:child_process';
import type { SpawnLike } from '../../runtime/process/spawn.js';
import { prepareSandboxedCommandLine, sandboxedSpawn, type PreparedCommand } from '../../runtime/sandbox/index.js';
import { definedOnly, stdioOf } from '../../runtime/sandbox/spawn-like.js';
import type { SandboxRequest } from '../../runtime/sandbox/options.js';
import type { Workspace } from '../../runtime/workspace/workspace.js';
import type { AgentChannel } from './agent-channel.js';
import type { ModelGrant } from './model-relay.js';

export interface ExternalSandboxOptions {
  /** The teammate (whose private TMPDIR and caches these are). */
  owner: string;
  /** Where it works: its sandbox roots say what it may write. */
  workspace: Workspace;
  /** True while its permission mode is plan: nothing but its config directory is written. Asked at each start. */
  readOnly(): boolean;
  /** Its CLI's private config directory (agentStateDir), if it has one. */
  configDir?: string | undefined;
  /** Its channel to the team (not for a program in a PTY, which calls no tools). */
  channel?: AgentChannel | undefined;
  /** Its access to the model through huddle's relay (Claude Code): its variables are added at each start. */
  model?: ModelGrant | undefined;
  /** Programs it must be able to run even where the private /tmp would hide them (its CLI, node, huddle's cli.js). */
  programs: readonly string[];
  /** Directories its program loads code from (an npm-installed CLI's node_modules), likewise. */
  libraries?: readonly string[];
}

export interface ExternalSandbox {
  /** The spawn seam the drivers start their program through. */
  spawn: SpawnLike;
  /** For a PTY: the file and arguments that run `argv` in the sandbox. */
  commandLine(argv: readonly string[], env: Record<string, string>): Promise<PreparedCommand>;
}

export function externalSandbox(options: ExternalSandboxOptions): ExternalSandbox {
  const request = async (env: Record<string, string>): Promise<SandboxRequest> => {
    // The channel must listen before the program (and the MCP server it starts) looks for it.
    await options.channel?.ready;
    const relay = options.model ? await options.model.ready : undefined;
    const roots = options.workspace.sandboxRoots();
    return {
      cwd: options.workspace.root,
      writable: roots.writable,
      readOnly: roots.readOnly,
      readable: [...(roots.readable ?? []), ...new Set([...options.programs.filter(Boolean).map((p) => path.dirname(p)), ...(options.libraries ?? [])])],
      mode: options.readOnly() ? 'read-only' : 'write',
      owner: options.owner,
      env: options.model ? { ...env, ...(await options.model.variables()) } : env,
      ...(options.configDir ? { state: [options.configDir] } : {}),
      ...(options.channel ? { socket: options.channel.socket } : {}),
      ...(relay ? { loopback: relay } : {}),
    };
  };
  return {
    spawn: async (command: string, args: readonly string[], spawnOptions: SpawnOptions) => {
      const { child } = await sandboxedSpawn([command, ...args], {
        ...(await request(definedOnly(spawnOptions.env ?? {}))),
        stdio: stdioOf(spawnOptions.stdio),
        detached: spawnOptions.detached ?? false,
      });
      return child;
    },
    commandLine: async (argv, env) => prepareSandboxedCommandLine(argv, await request(env)),
  };
}
