// What the sandbox hides, and that hiding never breaks a command: a hidden directory inside another
// hidden one (/run/user and $XDG_RUNTIME_DIR=/run/user/1000 on an ordinary desktop) made bwrap fail
// every command, trying to make a mount point inside the read-only stand-in. huddle's runtime
// directory (the sockets of live huddles) is always among the hidden.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { configureSandbox, huddleRuntimeDir } from '../../../src/runtime/sandbox/index.js';
import { hiddenPaths } from '../../../src/runtime/sandbox/hidden-paths.js';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';
import { describeSandboxed, makeArena } from '../../helpers/sandbox-arena.js';

const registry = new ToolRegistry(coreTools());
const arena = makeArena('hidden-');
afterEach(() => configureSandbox({}));
afterAll(() => arena.cleanup());

describeSandboxed('hidden paths', () => {
  it('a hidden directory inside another hidden one is covered once, and commands still run', async () => {
    const outer = path.join(arena.base, 'outer');
    const inner = path.join(outer, 'inner');
    mkdirSync(inner, { recursive: true });
    writeFileSync(path.join(inner, 'secret.txt'), 'inner secret\n');
    const hidden = hiddenPaths([outer, inner], []).map((h) => h.path);
    expect(hidden).toContain(outer);
    expect(hidden).not.toContain(inner);
    expect(hidden).toContain(huddleRuntimeDir());

    configureSandbox({ hidden: [inner, outer] });
    const result = await registry.run('bash', { command: `echo ran; ls -A ${outer} | wc -l; cat ${inner}/secret.txt` }, makeToolContext(arena.ws));
    expect(result.content).toContain('ran\n0\n');
    expect(result.content).not.toContain('inner secret');
  });
});

// OpenCode keeps the person's sign-ins in ~/.local/share/opencode/auth.json (and provider keys may be in
// ~/.config/opencode): no sandboxed command sees them; an opencode teammate has its own (private-dirs.ts).
it("hides OpenCode's sign-ins and config in the person's home", () => {
  const home = path.join(arena.base, 'home');
  for (const dir of ['.local/share/opencode', '.config/opencode', '.config/other']) mkdirSync(path.join(home, dir), { recursive: true });
  writeFileSync(path.join(home, '.local/share/opencode', 'auth.json'), '{"anthropic":{"type":"api","key":"sk-person"}}\n');
  const hidden = hiddenPaths([], [], home).map((h) => h.path);
  expect(hidden).toEqual(expect.arrayContaining([path.join(home, '.local/share/opencode'), path.join(home, '.config/opencode')]));
  expect(hidden).not.toContain(path.join(home, '.config/other'));
});

// The Gemini CLI and Codex keep the person's sign-ins and sessions in ~/.gemini and ~/.codex: hidden
// like Claude Code's ~/.claude (a gemini or codex teammate has its own, private-dirs.ts).
it("hides the Gemini CLI's and Codex's sign-ins in the person's home", () => {
  const home = path.join(arena.base, 'home-cli');
  for (const dir of ['.gemini', '.codex', '.other-cli']) mkdirSync(path.join(home, dir), { recursive: true });
  writeFileSync(path.join(home, '.codex', 'auth.json'), '{"OPENAI_API_KEY":"sk-person"}\n');
  const hidden = hiddenPaths([], [], home).map((h) => h.path);
  expect(hidden).toEqual(expect.arrayContaining([path.join(home, '.gemini'), path.join(home, '.codex')]));
  expect(hidden).not.toContain(path.join(home, '.other-cli'));
});
