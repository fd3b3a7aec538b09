// A workspace and a home for settings tests, each a fresh temp dir removed after the test: `write`
// puts a file in the workspace, or in the home when its path starts with `~/` (JSON unless a string).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function settingsWorkspace(prefix = 'huddle-settings-') {
  const base = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(base);
  const cwd = path.join(base, 'ws');
  const home = path.join(base, 'home');
  mkdirSync(path.join(cwd, '.team'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const write = (file: string, value: unknown) => {
    const target = file.startsWith('~/') ? path.join(home, file.slice(2)) : path.join(cwd, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  };
  return { cwd, home, write, env: {} as NodeJS.ProcessEnv };
}
