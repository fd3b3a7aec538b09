// huddle installed for a person's own project. `npm install -g .` and `npm link`
// from the clone put a working `huddle` on the PATH; on a Node older than 22.12 the command says so
// in one line and exits 2 before any of the bundle loads (no page of minified source). Real npm,
// real processes, a temp prefix. Both run with --ignore-scripts: their `prepare` would rebuild
// dist/ (npm test built it already) under every other test file running the CLI at the same time.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT } from '../../helpers/run-cli.js';

const VERSION = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version as string;
const OLD_NODE_MESSAGE = /^huddle needs Node\.js 22\.12 or newer, and this is Node 20\.\d+\.\d+: install a newer Node .*\n$/;

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** A PATH whose `node` is the one running these tests (Node 24, the pinned one under npm test). */
function pathWithThisNode(): string {
  return `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
}

describe('the Node version gate', () => {
  it('stops on an older Node with one line and exit code 2, before any chunk of the bundle loads', () => {
    // This Node, told it is 20: the gate reads process.versions.node first thing.
    const script = `Object.defineProperty(process.versions, 'node', { value: '20.20.2' }); await import(${JSON.stringify(pathToFileURL(CLI_PATH).href)});`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, '--', '-p', 'hi'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(OLD_NODE_MESSAGE);
  });

  it('stops a real Node 20 the same way, when the machine has one', (context) => {
    const candidates = ['/usr/bin/node', '/usr/local/bin/node'].filter((file) => existsSync(file));
    const old = candidates.find((file) => /^v20\./.test(execFileSync(file, ['--version'], { encoding: 'utf8' }).trim()));
    // Only a check on machines that happen to have a Node 20; the test above holds everywhere.
    if (!old) return context.skip();
    for (const args of [['-p', 'hi'], ['--version']]) {
      const run = spawnSync(old, [CLI_PATH, ...args], { encoding: 'utf8' });
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(OLD_NODE_MESSAGE);
    }
  });
});

describe('installing from the clone', () => {
  it('`npm install -g .` puts a huddle on the PATH that runs in another directory', () => {
    const prefix = temp('huddle-global-');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '.'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(install.status, install.stderr).toBe(0);
    const bin = path.join(prefix, 'bin', 'huddle');
    const project = temp('huddle-project-');
    const env = { PATH: pathWithThisNode(), HOME: project };
    const version = spawnSync(bin, ['--version'], { cwd: project, env, encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout.split('\n')[0]).toBe(VERSION);
    expect(spawnSync(bin, ['--help'], { cwd: project, env, encoding: 'utf8' }).stdout).toContain('huddle -p "PROMPT"');
  });

  it('`npm link` does the same', () => {
    const prefix = temp('huddle-link-');
    const link = spawnSync('npm', ['link', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: REPO_ROOT,
      env: { ...process.env, npm_config_prefix: prefix },
      encoding: 'utf8',
    });
    expect(link.status, link.stderr).toBe(0);
    const project = temp('huddle-project-');
    const run = spawnSync(path.join(prefix, 'bin', 'huddle'), ['--version'], {
      cwd: project,
      env: { PATH: pathWithThisNode(), HOME: project },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(VERSION);
  });
});
