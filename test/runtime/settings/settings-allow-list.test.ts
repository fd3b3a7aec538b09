import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SettingsError } from '../../../src/runtime/settings/errors.js';
import { loadSettings } from '../../../src/runtime/settings/load.js';
import { SettingsAllowList } from '../../../src/runtime/settings/settings-allow-list.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup() {
  const base = mkdtempSync(path.join(tmpdir(), 'huddle-allow-'));
  dirs.push(base);
  const cwd = path.join(base, 'ws');
  const home = path.join(base, 'home');
  mkdirSync(path.join(cwd, '.team'), { recursive: true });
  mkdirSync(path.join(home, '.config', 'huddle'), { recursive: true });
  // The person trusts the workspace's files as they are (docs/trust.md; untrusted ones: trust.test.ts).
  const trust = () => loadSettings({ cwd, home, env: {}, trust: true });
  return { cwd, home, trust, allow: new SettingsAllowList({ cwd, home, env: {} }) };
}

describe('the allow-list on settings', () => {
  it('reads every settings file and the old allow.json afresh; "always" answers go to settings.local.json, keeping its other keys', async () => {
    const { cwd, home, allow, trust } = setup();
    writeFileSync(path.join(home, '.config', 'huddle', 'settings.json'), JSON.stringify({ permissions: { allow: ['make'] } }));
    writeFileSync(path.join(cwd, '.team', 'allow.json'), JSON.stringify(['npm install']));
    writeFileSync(path.join(cwd, '.team', 'settings.local.json'), JSON.stringify({ model: 'mine', permissions: { allow: ['cargo build'] } }));
    trust();
    expect(allow.read()).toEqual({ entries: ['make', 'npm install', 'cargo build'] });

    expect(await allow.add(['touch', 'make', 'touch'])).toEqual(['touch']);
    expect(JSON.parse(readFileSync(path.join(cwd, '.team', 'settings.local.json'), 'utf8'))).toEqual({
      model: 'mine',
      permissions: { allow: ['cargo build', 'touch'] },
    });
    writeFileSync(path.join(cwd, '.team', 'settings.json'), JSON.stringify({ permissions: { allow: ['git fetch'] } }));
    trust();
    expect(allow.read().entries).toEqual(['make', 'npm install', 'git fetch', 'cargo build', 'touch']);
  });

  it('says which file is broken, keeps the rest, and never overwrites a broken settings.local.json', async () => {
    const { cwd, allow, trust } = setup();
    writeFileSync(path.join(cwd, '.team', 'settings.json'), JSON.stringify({ permissions: { allow: ['make'] } }));
    trust();
    writeFileSync(path.join(cwd, '.team', 'settings.local.json'), '{"permissions": ');
    const read = allow.read();
    expect(read.entries).toEqual(['make']);
    expect(read.error).toMatch(/^\.team\/settings\.local\.json: not valid JSON \(.+\); its allowed commands are ignored until it is fixed$/);
    await expect(allow.add(['touch'])).rejects.toThrow(SettingsError);
    expect(readFileSync(path.join(cwd, '.team', 'settings.local.json'), 'utf8')).toBe('{"permissions": ');
  });
});
