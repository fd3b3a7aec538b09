// Nothing reaches a sandboxed command through an inherited descriptor: huddle started with a pipe
// open at fd 39 (as an IDE's terminal or a jobserver leaves one, without close-on-exec) runs
// an agent's command that lists its shell's descriptors: only stdin, stdout and stderr. Hooks,
// verify commands and stdio MCP servers start through the same prepareSandboxed().
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { spawn } from 'node:child_process';
import { baseEnv, CLI_PATH } from '../../helpers/run-cli.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

let fake: FakeApi;
let arena: Arena;
beforeEach(async () => {
  fake = await startFakeApi();
  arena = makeArena('fds-');
});
afterEach(async () => {
  await fake.close();
  arena.cleanup();
});

/** The descriptors of the command's shell, listed by a child (whose own directory descriptor is not the shell's). */
const LIST = 'ls -l /proc/$$/fd; true'; // not the last command: the shell stays, ls lists its descriptors

function descriptors(text: string): string[] {
  return [...text.matchAll(/ (\d+) -> /g)].map((m) => m[1]!).sort();
}

describeSandboxed('no stray descriptors in the sandbox', () => {
  it('a command an agent runs sees only 0, 1 and 2', async () => {
    fake.enqueue(reply(toolUse('bash', { command: LIST })), replyText('done'));
    const child = spawn(process.execPath, [CLI_PATH, '-p', 'list fds'], {
      cwd: arena.ws,
      env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url },
      // Node marks close-on-exec what it inherits up to the first gap past fd 15; fd 39 is beyond.
      stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: 36 }, () => 'ignore' as const), 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout!.resume();
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(code, stderr).toBe(0);
    const shown = JSON.stringify(fake.requests[1]!.body.messages.at(-1));
    expect(descriptors(shown), shown).toEqual(['0', '1', '2']);
    // Not vacuous: huddle itself had them.
    expect((child.stdio as unknown[])[39]).toBeTruthy();
  });
});
