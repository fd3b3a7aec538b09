// The control socket's start (docs/headless.md#drive-a-running-huddle-from-outside): the usual start finds
// nothing under its socket's name and listens; a second huddle for the same workspace finds the first one
// listening there and refuses, leaving it alone.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import '../helpers/isolated-config.js';
import { controlRequest, controlSocketPath, readPointer } from '../../src/session/control-endpoint.js';
import { ControlServer } from '../../src/session/control-server.js';

const runtime = mkdtempSync(path.join(os.tmpdir(), 'huddle-test-runtime-'));
process.env.XDG_RUNTIME_DIR = runtime;
afterAll(() => rmSync(runtime, { recursive: true, force: true }));

describe('ControlServer.start', () => {
  it('listens where nothing was, refuses while another listens there, and listens again once it is gone', async () => {
    const teamDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'huddle-test-ws-')), '.team');
    mkdirSync(teamDir);
    const socket = controlSocketPath(teamDir);
    expect(existsSync(socket)).toBe(false);

    const first = await ControlServer.start(teamDir, 'headless', async () => 'first');
    expect(first.socket).toBe(socket);
    expect(await controlRequest(path.dirname(teamDir), { op: 'status' })).toMatchObject({ ok: true, result: 'first' });

    await expect(ControlServer.start(teamDir, 'headless', async () => 'second')).rejects.toThrow(`another huddle already listens on ${socket}`);
    // The refused start took nothing from the live one.
    expect(await controlRequest(path.dirname(teamDir), { op: 'status' })).toMatchObject({ ok: true, result: 'first' });
    expect(readPointer(teamDir)?.pid).toBe(process.pid);

    await first.close();
    const again = await ControlServer.start(teamDir, 'headless', async () => 'again');
    expect(await controlRequest(path.dirname(teamDir), { op: 'status' })).toMatchObject({ ok: true, result: 'again' });
    await again.close();
    expect(existsSync(socket)).toBe(false);
    rmSync(path.dirname(teamDir), { recursive: true, force: true });
  });
});
