// The OS sandbox for every command an agent causes (docs/contract.md#sandbox): bash, verify commands, hooks
// and stdio MCP servers. See spawn.ts for the call, status.ts for whether there is one.
export {
  sandboxedSpawn,
  prepareSandboxed,
  prepareSandboxedCommandLine,
  agentSocketPath,
  AGENT_SOCKET_INSIDE,
  type PreparedCommand,
  type SpawnRequest,
} from './spawn.js';
export { runInSandboxShell, warmSandboxShell, closeIdleSandboxShells, sandboxShellsUnavailable, type ShellRun } from './sandbox-shell.js';
export { agentStateDir, agentStateDirsOf, agentStateRoot } from './private-dirs.js';
export { huddleRuntimeDir } from './runtime-dir.js';
export { sandboxStatus, sandboxOffOnPurpose, SANDBOX_OFF_WARNING, type SandboxStatus } from './status.js';
export {
  configureSandbox,
  sandboxSettings,
  childEnv,
  HIDDEN_ENV,
  type SandboxSettings,
  type NetworkSettings,
  type SandboxRequest,
  type SandboxMode,
} from './options.js';
