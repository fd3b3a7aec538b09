// The sandbox an agent's shell commands share (src/runtime/sandbox/sandbox-shell.ts, docs/sandbox.md#the-sandbox):
// one bubblewrap for an agent's consecutive commands, a new one whenever the options differ or
// anything odd happened, and nothing a command left behind alive when the next one starts.
import { linkSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import {
  closeIdleSandboxShells,
  configureSandbox,
  sandboxedSpawn,
  sandboxSettings,
  sandboxStatus,
  warmSandboxShell,
} from '../../../src/runtime/sandbox/index.js';
import { shellRequest } from '../../../src/runtime/tools/bash.js';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import type { ToolContext } from '../../../src/runtime/tools/types.js';
import { describeSandboxed, makeArena } from '../../helpers/sandbox-arena.js';
import { makeToolContext } from '../../helpers/tool-context.js';

const registry = new ToolRegistry(coreTools());
let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'huddle-shell-'));
});
afterEach(async () => {
  await closeIdleSandboxShells();
  await rm(root, { recursive: true, force: true });
});

async function bash(command: string, options: { agent?: string; plan?: boolean; timeout_ms?: number } = {}) {
  const context: ToolContext = { ...makeToolContext(root, { agent: options.agent ?? 'tester' }), ...(options.plan ? { permissionMode: 'plan' } : {}) };
  const result = await registry.run('bash', { command, ...(options.timeout_ms ? { timeout_ms: options.timeout_ms } : {}) }, context);
  return result.content;
}

/** The sandbox a command ran in, named by its PID namespace. */
async function sandboxOf(options: Parameters<typeof bash>[1] = {}): Promise<string> {
  const out = await bash('readlink /proc/self/ns/pid', options);
  const match = /^pid:\[\d+\]/.exec(out);
  if (!match) throw new Error(`no namespace in ${JSON.stringify(out)}`);
  return match[0];
}

/** Host pids of live processes whose command line holds `marker`. */
function hostPids(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return !stat.split(') ')[1]?.startsWith('Z') && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describeSandboxed('sandbox shell: one sandbox for an agent’s consecutive commands', () => {
  it('runs an agent’s next command in the same sandbox, and another agent’s in its own', async () => {
    const first = await sandboxOf();
    expect(await sandboxOf()).toBe(first);
    expect(await sandboxOf({ agent: 'other' })).not.toBe(first);
    // Output, exit codes and the workspace as the one-shot sandbox gives them.
    expect(await bash('echo out; echo err >&2; exit 3')).toBe('out\nerr\n[exit code 3]');
    expect(await bash('pwd')).toBe(root);
    // The shell's script and its variables stay out of the command's environment, even names huddle's own has.
    process.env.nonce = 'from-the-environment';
    try {
      expect(await bash('echo "${HUDDLE_SHELL_SERVER:-none} ${nonce:-none} ${command:-none}"', { agent: 'third' })).toBe('none none none');
    } finally {
      delete process.env.nonce;
    }
    expect(await sandboxOf()).toBe(first);
  });

  it('kills what a command left in the background before it returns', async () => {
    const name = `huddle-shell-bg-${process.pid}-${Date.now()}`;
    const sandbox = await sandboxOf();
    expect(await bash(`(exec -a ${name} sleep 300) & echo started`)).toBe('started');
    // Gone already when the call returned: no waiting here.
    expect(hostPids(name)).toEqual([]);
    expect(await sandboxOf()).toBe(sandbox);
  });

  it('is not ended by output that looks like the end of a command', async () => {
    const sandbox = await sandboxOf();
    const fake = `printf '\\0%032x 0\\n' 0; printf '\\0%s 0\\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n')"`;
    const out = await bash(`${fake}; echo after; exit 4`);
    expect(out.endsWith('after\n[exit code 4]')).toBe(true);
    expect(await sandboxOf()).toBe(sandbox);
  });

  it('starts a new sandbox when the options differ: another mode, a newly hidden path', async () => {
    const write = await sandboxOf();
    expect(await sandboxOf({ plan: true })).not.toBe(write);
    expect(await bash('touch x', { plan: true })).toMatch(/Read-only file system/);
    mkdirSync(path.join(root, 'secrets'));
    writeFileSync(path.join(root, 'secrets', 'key.txt'), 'SECRET\n');
    const before = await sandboxOf();
    const saved = sandboxSettings();
    configureSandbox({ ...saved, hidden: [path.join(root, 'secrets')] });
    try {
      expect(await sandboxOf()).not.toBe(before);
      expect(await bash('cat secrets/key.txt')).toMatch(/No such file or directory/);
    } finally {
      configureSandbox(saved);
    }
    expect(await bash('cat secrets/key.txt')).toBe('SECRET');
  });

  it('after a timeout or a rewind the next command gets a fresh sandbox', async () => {
    const first = await sandboxOf();
    expect(await bash('sleep 30', { timeout_ms: 300 })).toMatch(/\[killed after 300 ms timeout\]$/);
    const second = await sandboxOf();
    expect(second).not.toBe(first);
    await closeIdleSandboxShells();
    expect(await sandboxOf()).not.toBe(second);
  });

  it('a command can neither end nor read the shell that runs it', async () => {
    const sandbox = await sandboxOf();
    const out = await bash('kill -9 1 $PPID; cat /proc/1/environ >/dev/null; head -c 1 /proc/1/mem >/dev/null; : >/proc/1/fd/0; echo alive');
    expect(out.match(/environ: Permission denied/g), out).toHaveLength(1);
    expect(out.match(/mem.*: Permission denied/g), out).toHaveLength(1);
    expect(out.match(/fd.*: Permission denied/g), out).toHaveLength(1);
    expect(out.endsWith('alive')).toBe(true);
    expect(await sandboxOf()).toBe(sandbox);
  });

  /** Hides token.txt, then lets `change` alter it on the host: the next command must not read it, in a new sandbox. */
  async function hiddenFileChanged(change: (secret: string) => void): Promise<void> {
    const secret = path.join(root, 'token.txt');
    writeFileSync(secret, 'OLD-SECRET\n');
    const saved = sandboxSettings();
    configureSandbox({ ...saved, hidden: [secret] });
    try {
      expect(await bash('cat token.txt; echo .')).not.toContain('SECRET');
      const before = await sandboxOf();
      change(secret);
      expect(await bash('cat token.txt; echo .')).not.toContain('SECRET');
      expect(await sandboxOf()).not.toBe(before);
    } finally {
      configureSandbox(saved);
    }
  }

  it('starts a new sandbox when a file it hides was replaced on the host (a bind follows the old file)', async () => {
    // As git and credential helpers write: a new file renamed over the old one.
    await hiddenFileChanged((secret) => {
      writeFileSync(`${secret}.new`, 'NEW-SECRET\n');
      renameSync(`${secret}.new`, secret);
    });
  });

  it('starts a new sandbox when the host dropped one of its binds without changing any inode (a hidden file unlinked and linked back)', async () => {
    // The same inode back at the same path: the sandbox's bind on it went with the unlink.
    await hiddenFileChanged((secret) => {
      linkSync(secret, `${secret}.bak`);
      rmSync(secret);
      linkSync(`${secret}.bak`, secret);
    });
  });

  /** Host pids of the shell servers (each its sandbox's PID 1, not the bwrap outside that started it) working in this test's workspace. */
  function serversHere(): number[] {
    const host = readlinkSync('/proc/self/ns/pid');
    return hostPids('HUDDLE_SHELL_SERVER').filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === root && readlinkSync(`/proc/${pid}/ns/pid`) !== host;
      } catch {
        return false;
      }
    });
  }

  it('starts an agent’s sandbox ahead of its command when the call is prepared, and the command runs in it', async () => {
    expect(serversHere()).toEqual([]);
    // What the agent loop does for every call of a response before the first runs (Tool.prepare).
    registry.prepare('bash', { command: 'true' }, makeToolContext(root, { agent: 'ahead' }));
    const [server] = await vi.waitFor(
      () => {
        const found = serversHere();
        expect(found).toHaveLength(1);
        return found;
      },
      { timeout: 15_000, interval: 20 },
    );
    const namespace = readlinkSync(`/proc/${server}/ns/pid`);
    expect(await sandboxOf({ agent: 'ahead' })).toBe(namespace);
    // Prepared again while it is open: no second one.
    registry.prepare('bash', { command: 'true' }, makeToolContext(root, { agent: 'ahead' }));
    expect(await sandboxOf({ agent: 'ahead' })).toBe(namespace);
    expect(serversHere()).toEqual([server]);
  });

  it('checks a sandbox started ahead against the host as it was when it became ready: a bind dropped before the command starts a new one', async () => {
    const secret = path.join(root, 'token.txt');
    writeFileSync(secret, 'OLD-SECRET\n');
    const saved = sandboxSettings();
    configureSandbox({ ...saved, hidden: [secret] });
    const namespaceOf = (pid: number) => readlinkSync(`/proc/${pid}/ns/pid`);
    try {
      // Resolves once the sandbox's shell is ready; started with the very request its command will make.
      await warmSandboxShell(shellRequest(makeToolContext(root, { agent: 'control' }), sandboxStatus()));
      const [control] = serversHere();
      expect(await sandboxOf({ agent: 'control' })).toBe(namespaceOf(control!));

      await warmSandboxShell(shellRequest(makeToolContext(root, { agent: 'ahead' }), sandboxStatus()));
      const ahead = serversHere().find((pid) => pid !== control)!;
      const warmed = namespaceOf(ahead);
      // The same inode back at the same path, after the sandbox was ready and before its first command.
      linkSync(secret, `${secret}.bak`);
      rmSync(secret);
      linkSync(`${secret}.bak`, secret);
      expect(await bash('cat token.txt; echo .', { agent: 'ahead' })).not.toContain('SECRET');
      expect(await sandboxOf({ agent: 'ahead' })).not.toBe(warmed);
    } finally {
      configureSandbox(saved);
    }
  });

  it('starts nothing ahead for a call the tool would refuse, nor for a read-only bash (plan mode sandboxes are one-shot)', async () => {
    registry.prepare('bash', { command: '' }, makeToolContext(root, { agent: 'refused' }));
    registry.prepare('bash', { command: 'true' }, { ...makeToolContext(root, { agent: 'planner' }), permissionMode: 'plan' });
    // A command of a third agent, run to the end, is the condition: the two preparations above ran before it started.
    const own = await sandboxOf({ agent: 'third' });
    expect(serversHere().map((pid) => readlinkSync(`/proc/${pid}/ns/pid`))).toEqual([own]);
  });

  it('runs a second command of the same agent while one runs, in a sandbox of its own', async () => {
    const slow = bash('while [ ! -e go ]; do sleep 0.02; done; readlink /proc/self/ns/pid');
    // The second waits for nothing: it frees the first.
    const quick = await bash('touch go; readlink /proc/self/ns/pid');
    const first = await slow;
    expect(quick.split('\n')[0]).toMatch(/^pid:\[/);
    expect(first.split('\n')[0]).toMatch(/^pid:\[/);
    expect(quick.split('\n')[0]).not.toBe(first.split('\n')[0]);
  });
});

describeSandboxed('sandbox: huddle’s own shells read no ~/.bashrc', () => {
  it('not even with a piped stdin and no SHLVL, where bash would (as for sshd)', async () => {
    const home = path.join(root, 'home');
    mkdirSync(home);
    writeFileSync(path.join(home, '.bashrc'), 'echo BASHRC-WAS-READ\n');
    const { child } = await sandboxedSpawn(['/usr/bin/env', 'echo', 'ran'], {
      cwd: root,
      writable: [root],
      mode: 'write',
      owner: 'tester',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end();
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await new Promise((resolve) => child.once('close', resolve));
    expect(out).toBe('ran\n');
  });
});

describeSandboxed('sandbox: a TMPDIR outside /tmp is not behind the private /tmp', () => {
  it('other agents’ private dirs under it stay hidden', async () => {
    const arena = makeArena('tmpdir-');
    const saved = process.env.TMPDIR;
    try {
      // What another huddle process keeps for its agents under that TMPDIR.
      const other = path.join(arena.base, `huddle-sandbox-${process.getuid?.() ?? 'user'}`, '999-x', 'alice', 'tmp');
      mkdirSync(other, { recursive: true });
      writeFileSync(path.join(other, 'notes.txt'), 'ALICE PRIVATE\n');
      process.env.TMPDIR = arena.base;
      const out = await bash(`cat ${path.join(other, 'notes.txt')}; ls ${arena.base}; echo .`, { agent: 'tmpdir-test' });
      expect(out).not.toContain('ALICE PRIVATE');
      expect(out).toMatch(/No such file or directory/);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      arena.cleanup();
    }
  });
});
