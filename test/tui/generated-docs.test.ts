// The console's keys and commands are written once, in the keymap and the command definitions:
// /help, the key and command tables in docs/console.md and the README's cheat-sheet are made from them.
// This fails when a committed page is stale (fix: npm run docs), and checks how rows are made.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedSection } from '../../src/runtime/generated-section.js';
import { COMMANDS } from '../../src/tui/commands/commands.js';
import { helpLines } from '../../src/tui/components/help-page.js';
import { consoleGeneratedFiles } from '../../src/tui/generated-docs.js';
import { CONSOLE_BINDINGS } from '../../src/tui/keys/console-keymap.js';
import { keyLabel, keyRows, keySections } from '../../src/tui/keys/key-docs.js';
import { compileKeymap } from '../../src/tui/keys/keymap.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
// eslint-disable-next-line no-control-regex
const plain = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, '');

describe('docs generated from the console', () => {
  for (const { file, update } of consoleGeneratedFiles()) {
    it(`${file} is up to date (npm run docs rewrites it)`, () => {
      const current = read(file);
      expect(update(current) === current, `${file} is stale: run npm run docs`).toBe(true);
    });
  }

  it('docs/console.md lists every binding and every command; the README has the cheat-sheet', () => {
    const page = read('docs/console.md');
    const keys = generatedSection(page, 'keys')!;
    for (const binding of CONSOLE_BINDINGS) expect(keys, binding.intent).toContain(binding.doc.replace(/\\/g, '\\\\'));
    const commands = generatedSection(page, 'commands')!;
    for (const command of COMMANDS) expect(commands).toContain(`| \`/${command.name}`);
    const cheat = generatedSection(read('README.md'), 'key-cheatsheet')!;
    expect(cheat).toMatch(/\| Ctrl\+C \| interrupt the agent in view while it works; else clear what is typed; else quit/);
    expect(cheat.split('\n').length).toBeLessThan(20);
  });

  it('/help shows every key row and every command, from the same data', () => {
    const help = helpLines(200).map(plain);
    for (const command of COMMANDS) expect(help.some((line) => line.startsWith(`/${command.name}`))).toBe(true);
    for (const { title, rows } of keySections(CONSOLE_BINDINGS)) {
      expect(help).toContain(title);
      for (const row of rows)
        expect(
          help.some((line) => line.startsWith(row.keys) && line.includes(row.doc.slice(0, 40))),
          row.keys,
        ).toBe(true);
    }
  });
});

describe('key rows', () => {
  it('write keys as people do', () => {
    expect(['ctrl+t', 'shift+tab', 'alt+1', 'escape', 'pageup', 'up', 'G', '<text>'].map(keyLabel)).toEqual([
      'Ctrl+T',
      'Shift+Tab',
      'Alt+1',
      'Esc',
      'PgUp',
      '↑',
      'G',
      'a character',
    ]);
  });

  it('join the keys of one line, and the lines of one key in the keymap order ("else")', () => {
    const keymap = compileKeymap([
      { layer: 'input', keys: ['enter'], intent: 'pick', when: ['paletteOpen'], doc: 'run the command' },
      { layer: 'input', keys: ['up'], intent: 'older', doc: 'older input' },
      { layer: 'input', keys: ['enter'], intent: 'send', doc: 'send it' },
      { layer: 'input', keys: ['ctrl+p'], intent: 'older', doc: 'older input' },
      { layer: 'input', keys: ['alt+1'], intent: 'jump', doc: 'jump', label: 'Alt+1 … Alt+9' },
      { layer: 'input', keys: ['alt+2'], intent: 'jump', doc: 'jump', label: 'Alt+1 … Alt+9' },
      { layer: 'input', keys: ['x'], intent: 'hidden' },
    ]);
    expect(keyRows(keymap.bindings)).toEqual([
      { keys: 'Enter', doc: 'run the command; else send it' },
      { keys: '↑ / Ctrl+P', doc: 'older input' },
      { keys: 'Alt+1 … Alt+9', doc: 'jump' },
    ]);
  });

  it('put every console binding in exactly one section', () => {
    const rows = keySections(CONSOLE_BINDINGS).flatMap((section) => section.rows);
    for (const binding of CONSOLE_BINDINGS)
      expect(
        rows.some((row) => row.doc.split('; else ').includes(binding.doc)),
        binding.intent,
      ).toBe(true);
    expect(new Set(keySections(CONSOLE_BINDINGS).map((s) => s.title)).size).toBe(keySections(CONSOLE_BINDINGS).length);
  });
});
