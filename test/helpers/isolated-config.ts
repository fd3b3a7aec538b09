// Every test file gets its own config directory (XDG_CONFIG_HOME) and state directory
// (XDG_STATE_HOME): trust records (docs/trust.md) and user settings written by a test stay out of
// the real ~/.config, the machine's own never reach a test, and the checkpoint shadows of a test's
// temporary workspaces (docs/trust.md#checkpoints-and-rewind) go under the same throwaway directory
// instead of piling up in ~/.local/state. The CLI helpers (run-cli.ts, pty-driver.ts) pass both on
// to the runs they start.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-test-config-'));
process.env.XDG_CONFIG_HOME = dir;
// Claude Code's user settings (~/.claude/settings.json) are read too: the machine's stay out of tests.
process.env.CLAUDE_CONFIG_DIR = path.join(dir, 'claude');
// Beside the config directory, not inside it: a test that hides or inspects one does not see the other.
export const TEST_STATE_HOME = `${dir}-state`;
mkdirSync(TEST_STATE_HOME);
process.env.XDG_STATE_HOME = TEST_STATE_HOME;
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(TEST_STATE_HOME, { recursive: true, force: true });
});
