import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findImports, ProjectMemory, readProjectInstructions } from '../../../src/agents/prompts/memory.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup() {
  const base = mkdtempSync(path.join(tmpdir(), 'huddle-memory-'));
  dirs.push(base);
  const workspaceRoot = path.join(base, 'ws');
  const home = path.join(base, 'home');
  mkdirSync(workspaceRoot, { recursive: true });
  mkdirSync(home, { recursive: true });
  let tick = 1_700_000_000;
  const write = (file: string, text: string) => {
    const target = file.startsWith('~/') ? path.join(home, file.slice(2)) : path.join(workspaceRoot, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text);
    // Every write gets a later mtime: a change is seen even within one clock tick.
    tick += 10;
    utimesSync(target, tick, tick);
    return target;
  };
  return { workspaceRoot, home, write };
}

describe('project memory: CLAUDE.md and AGENTS.md', () => {
  it("composes the user's and the project's files, in order, each named", () => {
    const { workspaceRoot, home, write } = setup();
    write('~/.claude/CLAUDE.md', 'MARKER-USER: answer in English.');
    write('CLAUDE.md', 'MARKER-CLAUDE: run npm test before you finish.');
    write('AGENTS.md', 'MARKER-AGENTS: never edit generated files.');
    const { text, files, truncated } = readProjectInstructions({ workspaceRoot, home });
    expect(truncated).toBe(false);
    expect(files.map((file) => file.label)).toEqual(['~/.claude/CLAUDE.md', 'CLAUDE.md', 'AGENTS.md']);
    expect(text.startsWith('<project-instructions>\n')).toBe(true);
    expect(text.endsWith('</project-instructions>')).toBe(true);
    const order = ['MARKER-USER', 'MARKER-CLAUDE', 'MARKER-AGENTS'].map((marker) => text.indexOf(marker));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text).toContain("Contents of CLAUDE.md (the project's instructions, checked into the codebase):\n\nMARKER-CLAUDE");
    expect(readProjectInstructions({ workspaceRoot: path.join(workspaceRoot, 'nowhere'), home: path.join(home, 'nobody') }).text).toBe('');
  });

  it('follows @imports relative to the importing file, from home with ~/, each file once, at most five hops', () => {
    const { workspaceRoot, home, write } = setup();
    write('CLAUDE.md', 'See @docs/style.md and @~/.claude/team.md. Mail ops@example.com. Also @AGENTS.md and @missing.md.');
    write('docs/style.md', 'MARKER-STYLE; details in @rules/naming.md');
    write('docs/rules/naming.md', 'MARKER-NAMING; back to @../../CLAUDE.md');
    write('~/.claude/team.md', 'MARKER-HOME-IMPORT');
    write('~/.claude/CLAUDE.md', 'Mine: @team.md');
    write('AGENTS.md', 'MARKER-AGENTS');
    write('chain/1.md', 'C1 @2.md');
    for (let i = 2; i <= 7; i++) write(`chain/${i}.md`, `MARKER-CHAIN-${i} @${i + 1}.md`);
    write('.claude/CLAUDE.md', 'deep: @../chain/1.md');
    const { text, files, notes } = readProjectInstructions({ workspaceRoot, home });
    for (const marker of ['MARKER-STYLE', 'MARKER-NAMING', 'MARKER-HOME-IMPORT', 'MARKER-AGENTS']) expect(text).toContain(marker);
    expect(text.split('MARKER-AGENTS').length - 1).toBe(1);
    expect(files.filter((file) => file.label === 'CLAUDE.md')).toHaveLength(1);
    expect(files.find((file) => file.label === 'docs/rules/naming.md')?.importedBy).toBe('docs/style.md');
    expect(text).toContain('Contents of docs/style.md (imported by CLAUDE.md)');
    // .claude/CLAUDE.md is hop 0; chain/1..5 are hops 1..5; chain/6 would be a sixth.
    expect(text).toContain('MARKER-CHAIN-5');
    expect(text).not.toContain('MARKER-CHAIN-6');
    expect(notes).toEqual([
      '@~/.claude/team.md in CLAUDE.md was not read: outside the workspace',
      '@6.md in chain/5.md was not read: imports go at most 5 levels deep',
    ]);
    // The user's own file imported it: read once, from there.
    expect(files.find((file) => file.label === '~/.claude/team.md')?.importedBy).toBe('~/.claude/CLAUDE.md');
    expect(text).toContain('(import not allowed: @~/.claude/team.md — outside the workspace)');
  });

  it('never imports from code spans or code blocks', () => {
    expect(
      findImports(['Use @a.md.', 'Not `@b.md` here.', '```sh', 'npm i @scope/pkg @c.md', '```', '~~~', '@d.md', '~~~', '(@e.md) and x@f.md'].join('\n')),
    ).toEqual(['a.md', 'e.md']);
  });

  it('reads a symlinked AGENTS.md once, and bounds the whole with a note saying what was cut', () => {
    const { workspaceRoot, home, write } = setup();
    write('CLAUDE.md', `HEAD ${'x'.repeat(5_000)} TAIL`);
    symlinkSync(path.join(workspaceRoot, 'CLAUDE.md'), path.join(workspaceRoot, 'AGENTS.md'));
    write('.claude/CLAUDE.md', 'MARKER-SECOND');
    const { text, files, truncated } = readProjectInstructions({ workspaceRoot, home, maxChars: 1_000 });
    expect(truncated).toBe(true);
    expect(files.map((file) => [file.label, file.included])).toEqual([
      ['CLAUDE.md', 1_000],
      ['.claude/CLAUDE.md', 0],
    ]);
    expect(text).toContain('HEAD');
    expect(text).not.toContain('TAIL');
    expect(text).toContain('[… CLAUDE.md is cut here: 1,000 of 5,010 characters shown.');
    expect(text).toContain('[… left out, over the 1,000-character limit for project instructions: .claude/CLAUDE.md]');
    expect(text).not.toContain('MARKER-SECOND');
    expect(text.length).toBeLessThan(1_800);
  });

  it('re-reads when a file changes, appears or an import changes, and not otherwise', () => {
    const { workspaceRoot, home, write } = setup();
    write('CLAUDE.md', 'v1 @notes.md');
    write('notes.md', 'notes v1');
    const memory = new ProjectMemory({ workspaceRoot, home });
    const first = memory.current();
    expect(first.changed).toBe(true);
    expect(first.instructions.text).toContain('notes v1');
    expect(memory.current().changed).toBe(false);

    write('notes.md', 'notes v2');
    const second = memory.current();
    expect(second.changed).toBe(true);
    expect(second.instructions.text).toContain('notes v2');

    write('AGENTS.md', 'MARKER-NEW-AGENTS');
    expect(memory.current().instructions.text).toContain('MARKER-NEW-AGENTS');

    write('CLAUDE.md', 'v2 without imports');
    const third = memory.current();
    expect(third.instructions.text).toContain('v2 without imports');
    expect(third.instructions.text).not.toContain('notes v2');
    expect(memory.version).toBe(4);
  });
});
