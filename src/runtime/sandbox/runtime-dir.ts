// huddle's private runtime directory (owner only, 0700): the Unix sockets of live huddle processes —
// each one's control socket (`huddle status/send/interrupt`, which acts as the person) and the
// per-agent sockets of its external teammates (each acts as one teammate). A socket's read-only bind
// still accepts connect(), so the sockets must be out of a sandboxed command's sight altogether:
// every sandbox hides this directory (hidden-paths.ts), and an external agent is shown only its
// own socket, at a fixed path inside its private /tmp (AGENT_SOCKET_INSIDE).
//
// $XDG_RUNTIME_DIR/huddle where the session has one (hidden anyway, with the ssh and gpg agents),
// else huddle-<uid> in the temp dir (behind the sandbox's private /tmp, and hidden explicitly where
// TMPDIR is elsewhere). Clients never guess it: `.team/control.json` names the live socket.
import { chmodSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { atExit } from '../process/at-exit.js';

/** Linux allows 107 bytes in a socket path, macOS 103; the sockets' names take up to ~50. */
const MAX_DIR_LENGTH = 50;

let made: string | undefined;

/** The directory (made owner-only on first use). */
export function huddleRuntimeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (made && isOwnPrivateDir(made)) return made;
  made = findRuntimeDir(env);
  sweepStale(made);
  return made;
}

/** Sockets named after a process (`agent-<pid>-…`, `model-<pid>-…`, `net-<pid>-…`) that a huddle which crashed left behind. */
const PER_PROCESS = /^(?:agent|model|net)-(\d+)-[0-9a-f]+\.sock$/;

/** The person's keys (session/person-key.ts), one per workspace, under the runtime directory. */
export function personKeysDir(runtimeDir: string): string {
  return path.join(runtimeDir, 'keys');
}

/** A person key where huddle kept them before they had their own directory. */
const LEGACY_PERSON_KEY = /^person-[0-9a-f]{16}\.key$/;

/** The names sweepStale() listed, kept for sweepDeadSockets() (the directory can hold thousands of person keys). */
let listed: { dir: string; names: string[] } | undefined;

function sweepStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const legacy = names.filter((name) => LEGACY_PERSON_KEY.test(name));
  if (legacy.length) {
    moveLegacyKeys(dir, legacy);
    names = names.filter((name) => !LEGACY_PERSON_KEY.test(name));
  }
  listed = { dir, names };
  for (const name of names) {
    const pid = Number(PER_PROCESS.exec(name)?.[1]);
    if (!pid || pid === process.pid || isAlive(pid)) continue;
    rmSync(path.join(dir, name), { force: true });
  }
}

/**
 * Keys an older huddle kept in the runtime directory move to their own directory once, with their names. Where
 * both places hold a key, the newer stays: an older huddle run since minted the one its team's hash now holds.
 * A failure leaves the key where it was (the older huddle reads it there) and never stops a start.
 */
function moveLegacyKeys(dir: string, legacy: string[]): void {
  const keys = personKeysDir(dir);
  try {
    mkdirSync(keys, { recursive: true, mode: 0o700 });
  } catch {
    return; // no keys directory (a file in its place, a full disk): minting reports it where it matters
  }
  for (const name of legacy) {
    const from = path.join(dir, name);
    const to = path.join(keys, name);
    try {
      // A link never replaces a key minted in keys/ meanwhile (rename would).
      linkSync(from, to);
      rmSync(from, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') continue;
      try {
        if (statSync(from).mtimeMs > statSync(to).mtimeMs) renameSync(from, to);
        else rmSync(from, { force: true });
      } catch {
        // another huddle starting at the same moment moved it first
      }
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function findRuntimeDir(env: NodeJS.ProcessEnv): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  const candidates: string[] = [];
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && path.isAbsolute(xdg) && isDirectory(xdg)) candidates.push(path.join(xdg, 'huddle'));
  candidates.push(path.join(os.tmpdir(), `huddle-${uid}`), path.join('/tmp', `huddle-${uid}`));
  for (const dir of candidates) {
    if (Buffer.byteLength(dir) > MAX_DIR_LENGTH) continue;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // Someone else's directory (or a link) at that name is not ours to put sockets in.
      if (!isOwnDir(dir)) continue;
      chmodSync(dir, 0o700);
      return dir;
    } catch {
      // not writable here: the next candidate
    }
  }
  // Every usual place is taken or unwritable: a fresh private directory (clients find it through the pointer).
  return mkdtempSync(path.join('/tmp', `huddle-${uid}-`));
}

function isOwnDir(dir: string): boolean {
  const info = lstatSync(dir);
  return info.isDirectory() && (typeof process.getuid !== 'function' || info.uid === process.getuid());
}

function isOwnPrivateDir(dir: string): boolean {
  try {
    return isOwnDir(dir) && (lstatSync(dir).mode & 0o077) === 0;
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Listens on a Unix socket that is owner-only (0600) from the first moment. The umask is the
 * process's: it is narrowed only around the bind, which listen() does at once for a path.
 */
export async function listenPrivately(server: Server, socket: string): Promise<void> {
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const umask = process.umask(0o177);
  try {
    server.listen(socket);
  } finally {
    process.umask(umask);
  }
  await listening;
  chmodSync(socket, 0o600);
}

const leftAtExit = new Set<string>();

/**
 * A socket file of this process's own (named after its pid) is removed when it exits, however it
 * ends its servers. (Not the control socket: a later huddle in the same workspace may have its path.)
 */
export function removeAtExit(socket: string): void {
  if (leftAtExit.size === 0) {
    atExit(() => {
      for (const file of leftAtExit) rmSync(file, { force: true });
    });
  }
  leftAtExit.add(socket);
}

/**
 * Sockets no process listens on any more that the pid sweep cannot tell by name: control sockets
 * (`control-<workspace>.sock`, kept per workspace) of a huddle that was killed, and the
 * `huddle-net-*` proxy directories older huddles made in the temp dir. A live socket answers
 * connect() and is left alone. Called as a session starts.
 */
export async function sweepDeadSockets(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const dir = huddleRuntimeDir(env);
  const dead: Array<Promise<void>> = [];
  // A socket made since that listing belongs to a live process: the listing the first sweep made serves once more.
  const names = listed?.dir === dir ? listed.names : list(dir);
  listed = undefined;
  for (const name of names) {
    if (!/^control-[0-9a-f]+\.sock$/.test(name)) continue;
    const socket = path.join(dir, name);
    dead.push(nobodyListens(socket).then((gone) => void (gone && rmSync(socket, { force: true }))));
  }
  const tmp = os.tmpdir();
  for (const name of list(tmp)) {
    if (!name.startsWith('huddle-net-')) continue;
    const legacy = path.join(tmp, name);
    try {
      if (!isOwnDir(legacy)) continue;
    } catch {
      continue;
    }
    dead.push(nobodyListens(path.join(legacy, 'proxy.sock')).then((gone) => void (gone && rmSync(legacy, { recursive: true, force: true }))));
  }
  await Promise.all(dead);
}

/** True when connect() is refused (or there is no socket): nobody will ever answer there. */
function nobodyListens(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect({ path: socket });
    const done = (gone: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(gone);
    };
    // Busy, not dead: left alone.
    const timer = setTimeout(() => done(false), 2_000);
    probe.once('connect', () => done(false));
    probe.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' || error.code === 'ENOENT'));
  });
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
