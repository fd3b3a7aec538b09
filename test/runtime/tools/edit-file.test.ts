import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { editDiff } from '../../../src/runtime/tools/edit-file.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';

const registry = new ToolRegistry(coreTools());
let root: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'huddle-edit-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'huddle-outside-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const edit = (input: Record<string, unknown>) => registry.run('edit_file', input, makeToolContext(root));
const file = (name: string) => path.join(root, name);

const source = ['function greet(name) {', '\treturn "hello " + name;', '}', '', 'greet("a");', 'greet("b");', ''].join('\n');

describe('edit_file', () => {
  it('replaces the unique occurrence and returns a diff', async () => {
    await writeFile(file('a.js'), source);
    const result = await edit({ path: 'a.js', old_text: '\treturn "hello " + name;', new_text: '\treturn `hi ${name}`;' });
    expect(result.isError).toBeUndefined();
    expect(result.content).toBe(
      [
        'edited a.js',
        '--- a.js',
        '+++ a.js',
        '@@ -1,5 +1,5 @@',
        ' function greet(name) {',
        '-\treturn "hello " + name;',
        '+\treturn `hi ${name}`;',
        ' }',
        ' ',
        ' greet("a");',
      ].join('\n'),
    );
    expect(await readFile(file('a.js'), 'utf8')).toBe(source.replace('"hello " + name', '`hi ${name}`'));
  });

  it('inserts new_text literally, $ patterns included, and can delete', async () => {
    await writeFile(file('a.txt'), 'keep\nremove me\nkeep\n');
    await edit({ path: 'a.txt', old_text: 'remove me\n', new_text: '' });
    expect(await readFile(file('a.txt'), 'utf8')).toBe('keep\nkeep\n');
    await edit({ path: 'a.txt', old_text: 'keep\nkeep', new_text: "$& $' $1" });
    expect(await readFile(file('a.txt'), 'utf8')).toBe("$& $' $1\n");
  });

  it('says when old_text is missing', async () => {
    await writeFile(file('a.js'), source);
    const result = await edit({ path: 'a.js', old_text: 'nowhere to be found', new_text: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('old_text was not found in a.js; read the file');
    expect(await readFile(file('a.js'), 'utf8')).toBe(source);
  });

  it('hints when only whitespace differs', async () => {
    await writeFile(file('a.js'), source);
    const result = await edit({ path: 'a.js', old_text: '    return "hello " + name;\n}', new_text: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('old_text was not found in a.js; its first line occurs at line 2 with different whitespace');
  });

  it('says where the first line matched when later lines differ', async () => {
    await writeFile(file('a.js'), source);
    const result = await edit({ path: 'a.js', old_text: 'function greet(name) {\n\treturn "bye";', new_text: 'x' });
    expect(result.content).toContain('its first line occurs at line 1 but the text after it differs');
  });

  it('refuses a non-unique old_text and says where it occurs', async () => {
    await writeFile(file('a.js'), source);
    const result = await edit({ path: 'a.js', old_text: 'greet(', new_text: 'hello(' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('old_text occurs 3 times in a.js (at lines 1, 5, 6)');
    expect(result.content).toContain('include more surrounding lines');
    expect(await readFile(file('a.js'), 'utf8')).toBe(source);
  });

  it('refuses an empty old_text and a no-op edit', async () => {
    await writeFile(file('a.js'), source);
    const empty = await edit({ path: 'a.js', old_text: '', new_text: 'x' });
    expect(empty.isError).toBe(true);
    expect(empty.content).toContain('old_text is empty');
    const same = await edit({ path: 'a.js', old_text: 'greet("a")', new_text: 'greet("a")' });
    expect(same.isError).toBe(true);
    expect(same.content).toContain('nothing to change');
  });

  it('edits CRLF files with old_text written with LF line ends', async () => {
    await writeFile(file('win.txt'), 'one\r\ntwo\r\nthree\r\n');
    const result = await edit({ path: 'win.txt', old_text: 'one\ntwo', new_text: 'uno\ndos' });
    expect(result.isError).toBeUndefined();
    expect(await readFile(file('win.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('refuses missing files and paths outside the workspace', async () => {
    const missing = await edit({ path: 'missing.js', old_text: 'a', new_text: 'b' });
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain('file not found: missing.js');

    await writeFile(path.join(outside, 'target.txt'), 'a');
    await symlink(path.join(outside, 'target.txt'), file('link.txt'));
    for (const requested of ['../target.txt', 'link.txt']) {
      const result = await edit({ path: requested, old_text: 'a', new_text: 'b' });
      expect(result.isError).toBe(true);
      expect(result.content).toContain(`path '${requested}' is outside the workspace`);
    }
    expect(await readFile(path.join(outside, 'target.txt'), 'utf8')).toBe('a');
  });
});

describe('editDiff', () => {
  it('gives a unified diff with a chosen amount of context', () => {
    const diff = editDiff('x.txt', 'a\nb\nc\nd\n', 'a\nb\nC\nd\n', 1);
    expect(diff).toBe(['--- x.txt', '+++ x.txt', '@@ -2,3 +2,3 @@', ' b', '-c', '+C', ' d'].join('\n'));
  });
});
