// Where huddle keeps its own files outside any workspace: its config directory (the user's settings, trust
// records) and its state directory (checkpoints). Low in src/runtime because the sandbox hides them from
// agents, the workspace refuses writes into them, and settings and checkpoints keep files there.
import os from 'node:os';
import path from 'node:path';

/** huddle's config directory: the user's settings and the trust records. */
export function huddleConfigDir(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const configHome = env.XDG_CONFIG_HOME?.trim() ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.resolve(configHome, 'huddle');
}

/** Where every workspace's checkpoints live: under the person's state directory (hidden in the sandbox). */
export function checkpointsRoot(): string {
  const base =
    process.env.XDG_STATE_HOME && path.isAbsolute(process.env.XDG_STATE_HOME) ? process.env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'huddle', 'checkpoints');
}
