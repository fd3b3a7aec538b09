// External agents in the console, in a real pseudo-terminal: `!cmd` and `/shell` open the
// person's shell in a terminal pane whose keys go to the shell; a Claude Code teammate (the real
// pinned CLI) gets its own pane with its tool calls; `huddle status` reaches the live console.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { CLAUDE_CODE_BIN, claudeCodeEnv, skipWithoutClaudeCode } from '../../helpers/claude-code-teammate.js';
import { useConsoles, type ConsolePty } from '../../helpers/console-pty.js';
import { runCli } from '../../helpers/run-cli.js';
import { trustWorkspace } from '../../helpers/trust.js';

let fake: FakeApi;
let dir: string;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-ext-pty-'));
});

afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = useConsoles();

function open(env: Record<string, string | undefined> = {}): Promise<ConsolePty> {
  return start({
    fake,
    workspace: dir,
    cols: 120,
    rows: 32,
    env: { SHELL: '/bin/sh', PS1: 'sh$ ', ...env },
  });
}

describe('external agents in the console', () => {
  it('!cmd runs the command in a shell pane whose keys go to the shell; /shell comes back to it', async () => {
    const tty = await open();
    await tty.waitForText('ask the lead');
    await tty.type('!echo shell-says-$((40+2))');
    tty.press('enter');
    // The shell pane comes into view, with the command's output on its screen.
    await tty.waitForScreen((s) => s.includes('keys go to the program') && s.includes('shell-says-42'));
    // Keys typed in the pane go to the shell itself (no input line in between).
    await tty.type('echo typed-$((1+1))');
    tty.press('enter');
    await tty.waitForText('typed-2');
    // `huddle status` from another shell sees the shell pane as a command teammate of the live console.
    const status = await runCli(['status', '--json', '--cwd', dir], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout);
    expect(report.face).toBe('console');
    expect(report.agents).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'shell', agent: 'command', role: 'shell' })]));
    // Shift+Tab leaves the pane; /shell brings the same shell back.
    tty.press('shiftTab');
    await tty.waitForText('ask the lead');
    await tty.type('/shell');
    tty.press('enter');
    await tty.waitForScreen((s) => s.includes('keys go to the program') && s.includes('typed-2'));
  }, 60_000);

  describe.skipIf(skipWithoutClaudeCode())('a claude-code teammate', () => {
    it('shows it in its own pane with its tool calls', async () => {
      const target = path.join(dir, 'notes.txt');
      fake.script(
        'lead',
        reply(
          text('Spawning alice.'),
          toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Write notes.txt, then report.', agent: 'claude-code' }),
        ),
        replyText('Waiting for alice.'),
        replyText('alice is done.'),
      );
      fake.script(
        'alice',
        reply(text('Writing the notes.'), toolUse('Write', { file_path: target, content: 'notes\n' })),
        reply(toolUse('mcp__huddle__send_message', { to: 'lead', content: 'notes.txt written' })),
        replyText('Reported.'),
      );
      mkdirSync(path.join(dir, '.team'), { recursive: true });
      writeFileSync(path.join(dir, '.team', 'settings.json'), JSON.stringify({ agents: { 'claude-code': { command: CLAUDE_CODE_BIN } } }));
      trustWorkspace(dir);
      const tty = await open({ ...claudeCodeEnv(`${dir}-home`), PATH: process.env.PATH });
      await tty.waitForText('ask the lead');
      await tty.type('Have alice write notes.txt with Claude Code.');
      tty.press('enter');
      await tty.waitForText('alice is done.');
      expect(readFileSync(target, 'utf8')).toBe('notes\n');
      // Alice's pane: her text and her tool calls (Claude Code's own and huddle's MCP tools).
      tty.press('tab');
      const pane = await tty.waitForScreen((s) => s.includes('Reported.') && s.includes('mcp__huddle__send_message'));
      expect(pane).toContain('Writing the notes.');
      expect(pane).toMatch(/Write/);
      rmSync(`${dir}-home`, { recursive: true, force: true });
    }, 120_000);
  });
});
