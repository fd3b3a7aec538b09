// @imports in CLAUDE.md/AGENTS.md are read by huddle itself, outside the sandbox, into every
// agent's system prompt: a repository must not use them to read what the sandbox hides. A real
// `huddle -p` in a workspace whose instruction files import, in every spelling we could think of,
// the victim directory, ~/.ssh, ~/.aws, ~/.pgpass, ~/.claude's credentials, /proc/self/environ,
// /etc/shadow and the --api-key-file (by name, by realpath, through a link): no request body
// carries any of it, each refusal is said in the prompt and once on stderr, and an allowed import
// still arrives.
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, replyText, startFakeApi } from '../../helpers/fake-api.js';
import { runCli } from '../../helpers/run-cli.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

const KEY = 'sk-ant-api03-IMPORTTEST-0123456789abcdefghijklmnop';
const MARKERS = {
  victim: 'VICTIM SECRET 42',
  ssh: 'SSH-PRIVATE-MARKER-7f3a',
  aws: 'AWS-SECRET-MARKER-91bc',
  pgpass: 'PGPASS-MARKER-55de',
  claudeCredentials: 'CLAUDE-OAUTH-MARKER-3c1d',
  claudeSettings: 'CLAUDE-SETTINGS-MARKER-8e2f',
};

let fake: FakeApi;
let arena: Arena;
beforeEach(async () => {
  fake = await startFakeApi();
  arena = makeArena('imports-');
});
afterEach(async () => {
  await fake.close();
  arena.cleanup();
});

function write(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

function systemOf(body: { system?: unknown }): string {
  return typeof body.system === 'string' ? body.system : JSON.stringify(body.system);
}

describeSandboxed('@imports are confined to the workspace', () => {
  it('every spelling of an import that leaves the workspace is refused, said, and reaches no model', async () => {
    const { ws, victim, base } = arena;
    const home = path.join(base, 'home');
    write(path.join(home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARKERS.ssh}\n`);
    write(path.join(home, '.aws', 'credentials'), `[default]\naws_secret_access_key=${MARKERS.aws}\n`);
    write(path.join(home, '.pgpass'), `localhost:5432:*:team:${MARKERS.pgpass}\n`);
    write(path.join(home, '.claude', '.credentials.json'), `{"token":"${MARKERS.claudeCredentials}"}\n`);
    write(path.join(home, '.claude', 'settings.json'), `{"env":{"X":"${MARKERS.claudeSettings}"}}\n`);
    write(path.join(home, '.claude', 'mine.md'), 'MARKER-USER-IMPORT');
    // The user's own file may import Markdown from ~/.claude, and nothing else there.
    write(path.join(home, '.claude', 'CLAUDE.md'), 'MARKER-USER-ROOT @mine.md @.credentials.json @settings.json @~/.pgpass');
    const keyFile = write(path.join(ws, '.secrets', 'anthropic.key'), `${KEY}\n`);
    symlinkSync(path.join(home, '.ssh'), path.join(ws, 'ssh-link'));
    symlinkSync(keyFile, path.join(ws, 'key-link.md'));
    symlinkSync(path.join(victim, 'secret.txt'), path.join(ws, 'notes.md'));
    symlinkSync(victim, path.join(ws, 'vendor'));
    // A root file that is itself a link out of the workspace.
    symlinkSync(path.join(home, '.aws', 'credentials'), path.join(ws, 'AGENTS.md'));
    write(path.join(ws, 'docs', 'ok.md'), 'MARKER-ALLOWED-IMPORT; next: @deeper/chain.md');
    // An import chain: the third hop tries to leave.
    write(path.join(ws, 'docs', 'deeper', 'chain.md'), 'MARKER-CHAIN @../../../victim/secret.txt @../../ssh-link/id_rsa');
    const spellings = [
      '@../victim/secret.txt',
      '@../../victim/secret.txt',
      `@${victim}/secret.txt`,
      '@docs/../../victim/secret.txt',
      '@ssh-link/id_rsa',
      '@notes.md',
      '@vendor/secret.txt',
      '@key-link.md',
      '@.secrets/anthropic.key',
      `@${realpathSync(keyFile)}`,
      '@/proc/self/environ',
      '@/proc/self/cwd/../victim/secret.txt',
      '@/etc/shadow',
      '@~/.ssh/id_rsa',
      '@~/.aws/credentials',
      '@~/.pgpass',
      '@~/.claude/.credentials.json',
      '@~/.claude/mine.md',
      '@%2e%2e/victim/secret.txt',
      '@"../victim/secret.txt"',
      "@'../victim/secret.txt'",
      '@docs/ok.md',
    ];
    write(path.join(ws, 'CLAUDE.md'), `Project rules.\n${spellings.join('\n')}\n`);
    write(path.join(ws, '.claude', 'CLAUDE.md'), 'also @../docs/deeper/chain.md and @../ssh-link/id_rsa');

    fake.enqueue(replyText('done'));
    const result = await runCli(['-p', 'say done', '--api-key-file', keyFile], {
      cwd: ws,
      env: { HOME: home, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: fake.url },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests.length).toBeGreaterThan(0);
    const system = systemOf(fake.requests[0]!.body);
    const bodies = fake.requests.map((r) => JSON.stringify(r.body)).join('\n');
    for (const [what, marker] of Object.entries(MARKERS)) expect(bodies.includes(marker), `${what} reached a model`).toBe(false);
    expect(bodies.includes(KEY), 'the key reached a model').toBe(false);
    expect(bodies.includes(KEY.split('').reverse().join('')), 'the key, reversed, reached a model').toBe(false);
    expect(bodies).not.toContain('HOME=');
    // What is allowed still arrives.
    for (const marker of ['MARKER-USER-ROOT', 'MARKER-USER-IMPORT', 'MARKER-ALLOWED-IMPORT', 'MARKER-CHAIN']) expect(system).toContain(marker);
    // Each refusal is said where the import stood, and once to the person.
    for (const spelling of ['@../victim/secret.txt', '@/proc/self/environ', '@~/.pgpass', '@ssh-link/id_rsa', '@key-link.md', '@../../../victim/secret.txt']) {
      expect(system).toContain(`(import not allowed: ${spelling} — `);
    }
    expect(system).toContain('(import not allowed: @~/.claude/mine.md — outside the workspace)');
    expect(system).toContain('(import not allowed: @.credentials.json — outside the workspace and not a Markdown file in ~/.claude)');
    expect(result.stderr).toContain('@/proc/self/environ in CLAUDE.md was not read: outside the workspace');
    expect(result.stderr).toContain('@.secrets/anthropic.key in CLAUDE.md was not read: agents may not read it');
    expect(result.stderr).toContain('AGENTS.md was not read: outside the workspace');
    expect(result.stderr.split('@ssh-link/id_rsa in CLAUDE.md was not read').length - 1).toBe(1);
  });

  it('a secret written into an instruction file is scrubbed from the prompt', async () => {
    write(path.join(arena.ws, 'CLAUDE.md'), `Use this key: ${KEY}\nor base64: ${Buffer.from(KEY).toString('base64')}\n`);
    fake.enqueue(replyText('done'));
    const result = await runCli(['-p', 'say done'], { cwd: arena.ws, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code, result.stderr).toBe(0);
    const system = systemOf(fake.requests[0]!.body);
    expect(system).toContain('Use this key: [redacted]');
    expect(system).not.toContain(KEY);
    expect(system).not.toContain(Buffer.from(KEY).toString('base64').slice(0, 30));
  });
});
