// The codex driver checks the CLI's version once before its first turn (`codex --version`): one
// older than the tested range is refused with one line naming what to install, and nothing else
// runs; a supported one goes on to `codex exec`, and a failed run is its one `Error:` line. The
// program here is a script that plays codex.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodexDriver } from '../../../src/agents/external/codex.js';
import type { DriverSetup, TurnSink } from '../../../src/agents/external/driver.js';
import { TESTED_VERSIONS } from '../../../src/agents/external/cli-versions.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-codex-version-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A `codex` that prints `version` and logs each command line; `exec` prints one finished turn. */
function fakeCodex(version: string, failure?: string): string {
  const file = path.join(dir, 'codex');
  const turn = [
    { type: 'thread.started', thread_id: 'thread-1' },
    { type: 'turn.started' },
    { type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'done' } },
    { type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 4, cache_write_input_tokens: 2, output_tokens: 3 } },
  ]
    .map((line) => `'${JSON.stringify(line)}'`)
    .join(' ');
  writeFileSync(
    file,
    `#!/bin/sh\necho "$*" >> "${dir}/calls"\nif [ "$1" = --version ]; then echo "codex-cli ${version}"; exit 0; fi\n${failure ? `printf '%s\\n' '${failure}' 'Stack backtrace:' '   0: <unknown>' '   1: <unknown>' >&2; exit 1\n` : ''}for l in ${turn}; do echo "$l"; done\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

function setupFor(command: string): DriverSetup {
  return {
    name: 'cx',
    cwd: dir,
    command,
    args: [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    model: undefined,
    instructions: 'You are cx.',
    mcp: { command: 'huddle', args: ['mcp', '--as', 'cx'] },
    permissionMode: 'auto',
    killGraceMs: 1000,
  };
}

const sink: TurnSink = { text: () => {}, toolCall: () => {}, toolResult: () => {}, notice: () => {}, permission: async () => undefined, session: () => {} };
const calls = () => readFileSync(path.join(dir, 'calls'), 'utf8').trim().split('\n');

describe('the codex version check', () => {
  it('refuses a codex older than the tested range with one line, and runs nothing else', async () => {
    const driver = new CodexDriver(setupFor(fakeCodex('0.98.0')));
    const report = await driver.runTurn('hello', sink, new AbortController().signal);
    expect(report.outcome).toBe('failed');
    expect(report.error).toBe(
      `cannot start a codex teammate: codex 0.98.0 is older than huddle supports (tested: ${TESTED_VERSIONS.codex!.tested}); update it with \`npm install -g @openai/codex@${TESTED_VERSIONS.codex!.tested}\``,
    );
    // A second turn is refused the same way without asking again.
    expect((await driver.runTurn('again', sink, new AbortController().signal)).error).toBe(report.error);
    expect(calls()).toEqual(['--version']);
  });

  it("drives a supported codex: exec with huddle's MCP server required, usage counted once per token", async () => {
    const driver = new CodexDriver(setupFor(fakeCodex(TESTED_VERSIONS.codex!.tested)));
    const report = await driver.runTurn('hello', sink, new AbortController().signal);
    expect(report).toMatchObject({
      outcome: 'end_turn',
      text: 'done',
      usage: { input_tokens: 4, cache_read_input_tokens: 4, cache_creation_input_tokens: 2, output_tokens: 3 },
    });
    const [version, exec] = calls();
    expect(version).toBe('--version');
    expect(exec).toMatch(/^exec --json .*mcp_servers\.huddle\.required=true/);
  });

  it("says why a run failed in one line: Codex's error, not its stack backtrace", async () => {
    const driver = new CodexDriver(
      setupFor(fakeCodex(TESTED_VERSIONS.codex!.tested, 'Error: thread/start failed: required MCP servers failed to initialize: huddle: handshaking failed')),
    );
    const report = await driver.runTurn('hello', sink, new AbortController().signal);
    expect(report).toMatchObject({
      outcome: 'failed',
      error: 'codex exited with code 1: thread/start failed: required MCP servers failed to initialize: huddle: handshaking failed',
    });
  });
});
