// The sandbox probe (src/runtime/sandbox/status.ts): the console runs it in child processes without
// blocking (probeSandbox), everything else reads sandboxStatus(); both must come to the same verdict.
import { afterEach, describe, expect, it } from 'vitest';
import { probeSandbox, resetSandboxStatus, sandboxStatus } from '../../../src/runtime/sandbox/status.js';

afterEach(() => resetSandboxStatus());

describe('the sandbox probe', () => {
  it('probed without blocking, sandboxStatus() then says what the blocking probe says, and runs nothing more', async () => {
    resetSandboxStatus();
    const blocking = sandboxStatus();
    resetSandboxStatus();
    await probeSandbox();
    const probed = sandboxStatus();
    expect(probed).toEqual(blocking);
    // Cached once per process: a second probe changes nothing.
    await probeSandbox();
    expect(sandboxStatus()).toBe(probed);
  });

  it('with HUDDLE_SANDBOX=off probes nothing: off on purpose', async () => {
    resetSandboxStatus();
    const env = { ...process.env, HUDDLE_SANDBOX: 'off' };
    await probeSandbox(env);
    expect(sandboxStatus(env)).toMatchObject({ available: false, onPurpose: true });
  });
});
