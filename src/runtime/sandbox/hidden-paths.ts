// What a sandboxed command may not read, in every permission mode: the places where credentials
// live on a developer's machine, the sockets of daemons that would run anything for it (docker),
// the person's session services (ssh and gpg agents, the keyring), the file the API key was
// read from, huddle's own runtime directory (the control sockets of live huddles and their agents'
// sockets: runtime-dir.ts) and its external agents' config directories (private-dirs.ts). Everything else stays readable (read-only): compilers, node_modules, the repository,
// the home directory's ordinary files. A plan-mode agent reads what any mode may read.
import { existsSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registeredSecretFiles } from '../secrets.js';
import { expandPath, sandboxSettings } from './options.js';
import { agentStateRoot, privateDirsRoot } from './private-dirs.js';
import { huddleRuntimeDir } from './runtime-dir.js';
import { checkpointsRoot } from '../fs/huddle-dirs.js';

/** Relative to the home directory. */
const HOME_SECRETS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.netrc',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.pip/pip.conf',
  '.config/pip',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.git-credentials',
  '.config/git/credentials',
  '.config/gh',
  '.config/hub',
  '.config/huddle',
  '.claude',
  '.claude.json',
  // Gemini CLI's and Codex's sign-ins and sessions, as the person's own.
  '.gemini',
  '.codex',
  '.anthropic',
  '.password-store',
  '.local/share/keyrings',
  // OpenCode's sign-ins (auth.json), sessions and config, as the person's own.
  '.local/share/opencode',
  '.config/opencode',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
  '.bash_history',
  '.zsh_history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.pgpass',
  '.pg_service.conf',
  '.mysql_history',
  '.vault-token',
  '.terraform.d/credentials.tfrc.json',
];

/** Absolute. */
const SYSTEM_SECRETS = [
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/containerd/containerd.sock',
  '/run/podman/podman.sock',
  '/run/user',
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/ssh/ssh_host_rsa_key',
  '/etc/ssh/ssh_host_ecdsa_key',
  '/etc/ssh/ssh_host_ed25519_key',
];

/** The secret location (as `~/…` or absolute) that `p` is in, if any. */
export function secretLocation(p: string, home = os.homedir()): string | undefined {
  for (const rel of HOME_SECRETS) {
    const secret = path.join(home, rel);
    if (p === secret || p.startsWith(`${secret}/`)) return `~/${rel}`;
  }
  for (const secret of SYSTEM_SECRETS) if (p === secret || p.startsWith(`${secret}/`)) return secret;
  for (const file of registeredSecretFiles()) if (p === file) return 'the API key file';
  return undefined;
}

export interface HiddenPath {
  path: string;
  kind: 'dir' | 'file';
}

/**
 * The existing paths to cover, real paths (a link to a secret hides its target), minus any that
 * hold a writable root (the workspace in ~/.docker would otherwise vanish).
 */
export function hiddenPaths(extra: readonly string[], keep: readonly string[], home = os.homedir()): HiddenPath[] {
  // Looked up at most every few seconds: some fifty stat calls per command add up under load.
  const key = JSON.stringify([
    extra,
    keep,
    home,
    registeredSecretFiles(),
    process.env.XDG_RUNTIME_DIR,
    process.env.XDG_CACHE_HOME,
    process.env.XDG_STATE_HOME,
    os.tmpdir(),
  ]);
  const now = Date.now();
  if (cache && cache.key === key && now - cache.at < CACHE_MS) return cache.paths;
  const paths = findHidden(extra, keep, home);
  cache = { key, at: now, paths };
  return paths;
}

/**
 * What the sandbox hides that `real` (a real path) is, or is inside: huddle's own reads on an
 * agent's behalf (project memory's @imports) honour the same line. `except`: hidden real paths a
 * caller may read through anyway (the user's own ~/.claude for the user's instructions).
 */
export function hiddenFromAgents(real: string, home = os.homedir(), except: readonly string[] = []): string | undefined {
  for (const hidden of hiddenPaths(sandboxSettings().hidden ?? [], [], home)) {
    if (except.includes(hidden.path)) continue;
    if (real === hidden.path || real.startsWith(`${hidden.path}/`)) return hidden.path;
  }
  for (const file of registeredSecretFiles()) {
    try {
      if (realpathSync(file) === real) return 'the API key file';
    } catch {
      // gone: nothing to match
    }
  }
  return undefined;
}

const CACHE_MS = 5_000;
let cache: { key: string; at: number; paths: HiddenPath[] } | undefined;

function findHidden(extra: readonly string[], keep: readonly string[], home: string): HiddenPath[] {
  const wanted = [
    ...HOME_SECRETS.map((p) => path.join(home, p)),
    ...SYSTEM_SECRETS,
    ...(process.env.XDG_RUNTIME_DIR ? [process.env.XDG_RUNTIME_DIR] : []),
    huddleRuntimeDir(),
    // Every agent's private /tmp and huddle's own sandbox files: out of sight with the host's /tmp,
    // but a TMPDIR elsewhere is not behind the private /tmp.
    privateDirsRoot(),
    agentStateRoot(),
    // Checkpoints hold copies of workspaces (and what was deleted from them): not for agents to read.
    checkpointsRoot(),
    ...registeredSecretFiles(),
    ...extra.map((p) => expandPath(p, home)),
  ];
  const seen = new Set<string>();
  const out: HiddenPath[] = [];
  for (const candidate of wanted) {
    if (!existsSync(candidate)) continue;
    let real: string;
    try {
      real = realpathSync(candidate);
    } catch {
      continue;
    }
    if (seen.has(real) || real === '/') continue;
    if (keep.some((k) => k === real || k.startsWith(`${real}/`))) continue;
    seen.add(real);
    let kind: HiddenPath['kind'];
    try {
      kind = statSync(real).isDirectory() ? 'dir' : 'file';
    } catch {
      continue;
    }
    out.push({ path: real, kind });
  }
  // A path inside another hidden directory is hidden with it; covering it again would make bwrap
  // create its mount point inside the read-only empty directory, which fails (/run/user and
  // $XDG_RUNTIME_DIR=/run/user/1000 on an ordinary desktop).
  return out.filter((hidden) => !out.some((other) => other.kind === 'dir' && hidden.path.startsWith(`${other.path}/`)));
}
