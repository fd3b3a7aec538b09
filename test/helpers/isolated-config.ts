// Every test file gets its own config directory (XDG_CONFIG_HOME): trust records (docs/trust.md)
// and user settings written by a test stay out of the real ~/.config, and the machine's own never
// reach a test. The CLI helpers (run-cli.ts, pty-driver.ts) pass it on to the runs they start.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-test-config-'));
process.env.XDG_CONFIG_HOME = dir;
// Claude Code's user settings (~/.claude/settings.json) are read too: the machine's stay out of tests.
process.env.CLAUDE_CONFIG_DIR = path.join(dir, 'claude');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
