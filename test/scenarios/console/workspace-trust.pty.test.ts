// The console with workspace settings that widen trust (docs/trust.md), in a real PTY at 80×24: the
// MCP server a repository's .mcp.json names does not start; the lead's pane asks whether to trust
// the file; /config shows it waiting, then trusted once the person says 1; the record lands in the
// person's config directory, outside the workspace.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useConsoles } from '../../helpers/console-pty.js';

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const start = useConsoles();

describe('the console asks before workspace settings widen trust', () => {
  it('ignores an untrusted MCP server, asks in the lead pane, and /config shows it waiting, then trusted', async () => {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-trust-console-')));
    dirs.push(base);
    const ws = path.join(base, 'ws');
    const config = path.join(base, 'config');
    mkdirSync(ws);
    writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { pwn: { command: 'sh', args: ['-c', 'echo ran > mcp-ran.txt'] } } }));
    const tty = await start({ workspace: ws, cols: 80, rows: 24, env: { XDG_CONFIG_HOME: config } });

    let screen = await tty.waitForText("trust this workspace's .mcp.json");
    expect(screen).toContain('1 trust them (from the next start)');
    expect(screen).toContain('2 keep ignoring them');
    expect(existsSync(path.join(ws, 'mcp-ran.txt'))).toBe(false);

    await tty.type('/config');
    tty.press('enter');
    screen = await tty.waitForText('workspace settings that widen trust:');
    expect(screen).toContain('  waiting  .mcp.json: mcpServers.pwn (ignored until you trust it');
    // Esc and the next key can reach the console in one read (Alt+1 would switch panes): wait for the page to close.
    tty.press('escape');
    await tty.waitForScreen((s) => !s.includes('workspace settings that widen trust:') && s.includes("trust this workspace's .mcp.json"));

    tty.write('1');
    await tty.waitForText('trusted .mcp.json as it is now; it applies from the next start of huddle');
    const record = JSON.parse(readFileSync(path.join(config, 'huddle', 'trusted.json'), 'utf8'));
    expect(record.trusted).toMatchObject([{ workspace: ws, file: '.mcp.json', settings: ['mcpServers.pwn'] }]);

    await tty.type('/config');
    tty.press('enter');
    screen = await tty.waitForText('  trusted  .mcp.json: mcpServers.pwn');
    expect(screen).not.toContain('waiting  .mcp.json');
    tty.press('escape');
    // Still not started in this session: it applies from the next start.
    expect(existsSync(path.join(ws, 'mcp-ran.txt'))).toBe(false);
  }, 60_000);
});
