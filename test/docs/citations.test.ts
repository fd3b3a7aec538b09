// Citations stay true: every `docs/….md#anchor` or `README.md#anchor` a source, test, script or
// benchmark line names exists (anchors computed from the headings as GitHub does), nothing cites the
// first sketch ("SPEC section N") or a tracker number (an issue, a seed, a finding) that a reader
// of the repository cannot open, and every relative link in README.md, CONTRIBUTING.md and docs/*.md resolves.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const THIS_FILE = path.relative(ROOT, fileURLToPath(import.meta.url));

/** GitHub's anchor for a heading: lowercased, punctuation dropped, spaces to '-'; repeats get -1, -2… */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a markdown text (headings inside code fences are not headings). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opening = /^\s*(```+|~~~+)/.exec(line);
    if (opening) {
      if (fence === undefined) fence = opening[1]![0]!;
      else if (opening[1]![0] === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Citations a reader cannot follow: the first sketch's sections and tracker numbers. */
const FORBIDDEN: Array<[RegExp, string]> = [
  [/\bSPEC\b/, 'cites the first sketch (SPEC): link docs/contract.md#… or say the rule'],
  [/§\s*\d/, 'cites a numbered section (§N): link the docs section or say the rule'],
  [/\b(?:issues?|seeds?|findings?|tickets?|trackers?)\s+#?\d+/i, 'cites a tracker number: say the rule it stands for'],
  [/\bresearch\s+§/i, 'cites a research note: say what it says'],
];

/** `docs/x.md`, `docs/x.md#anchor`, `README.md#anchor` as cited in a line (not inside a longer path). */
const DOC_CITATION = /(?<![\w/.-])((?:docs\/[\w.-]+\.md)|README\.md|CONTRIBUTING\.md)(?:#([\w-]+))?/g;

export interface Problem {
  where: string;
  what: string;
}

/** The comment part of a line of code (a test's fixture may write its own `docs/…` files). */
function commentOf(line: string): string {
  if (/^\s*(?:\/\*|\*|#(?!!))/.test(line)) return line;
  const at = line.search(/(?<!:)\/\//);
  return at < 0 ? '' : line.slice(at);
}

/**
 * The problems in one file's text: citations of docs that do not exist, and forbidden citations.
 * In code, a docs file is cited in a comment, or with an anchor anywhere (a test title, say).
 */
export function checkSource(where: string, text: string, readDoc: (file: string) => string | undefined): Problem[] {
  const problems: Problem[] = [];
  const code = !/\.(?:md|json)$/.test(where);
  text.split('\n').forEach((line, index) => {
    const at = `${where}:${index + 1}`;
    for (const [pattern, what] of FORBIDDEN) if (pattern.test(line)) problems.push({ where: at, what: `${what}: ${line.trim()}` });
    const comment = code ? commentOf(line) : line;
    for (const match of line.matchAll(DOC_CITATION)) {
      const [, file, anchor] = match;
      if (anchor === undefined && !comment.includes(match[0])) continue;
      const doc = readDoc(file!);
      if (doc === undefined) problems.push({ where: at, what: `cites ${file}, which does not exist` });
      else if (anchor !== undefined && !anchorsOf(doc).has(anchor)) problems.push({ where: at, what: `cites ${file}#${anchor}: no such heading in ${file}` });
    }
  });
  return problems;
}

/** The relative links of a markdown file that do not resolve (a file, or a heading in it). */
export function checkLinks(
  where: string,
  markdown: string,
  readFile: (relative: string) => string | undefined,
  exists: (relative: string) => boolean,
): Problem[] {
  const problems: Problem[] = [];
  const dir = path.posix.dirname(where);
  let fence = false;
  markdown.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) return;
    const at = `${where}:${index + 1}`;
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file, anchor] = target.split('#', 2) as [string, string | undefined];
      const relative = file === '' ? where : path.posix.normalize(path.posix.join(dir, file));
      if (file !== '' && !exists(relative)) {
        problems.push({ where: at, what: `links ${target}: ${relative} does not exist` });
        continue;
      }
      if (anchor === undefined || !relative.endsWith('.md')) continue;
      if (!anchorsOf(readFile(relative) ?? '').has(anchor)) problems.push({ where: at, what: `links ${target}: no heading #${anchor} in ${relative}` });
    }
  });
  return problems;
}

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git']);
const SOURCE_FILE = /\.(?:ts|tsx|mts|mjs|js|cjs|sh|md|json)$/;

function walk(relative: string, out: string[]): string[] {
  const full = path.join(ROOT, relative);
  if (!existsSync(full)) return out;
  if (statSync(full).isFile()) {
    out.push(relative);
    return out;
  }
  for (const entry of readdirSync(full, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const child = path.posix.join(relative, entry.name);
    if (entry.isDirectory()) walk(child, out);
    else if (SOURCE_FILE.test(entry.name) && child !== 'bench/results.json') out.push(child);
  }
  return out;
}

function readRepoFile(relative: string): string | undefined {
  const full = path.join(ROOT, relative);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
}

function describeProblems(problems: Problem[]): string {
  return problems.map((p) => `${p.where}: ${p.what}`).join('\n');
}

describe('the checks themselves', () => {
  it('compute the anchors GitHub gives headings', () => {
    const anchors = anchorsOf(
      [
        '# The huddle contract',
        '## Events',
        '### text_delta',
        "### huddle's MCP server",
        '## Where the first sketch differs',
        '```sh',
        '# not a heading',
        '```',
        '## Events',
      ].join('\n'),
    );
    expect([...anchors]).toEqual(['the-huddle-contract', 'events', 'text_delta', 'huddles-mcp-server', 'where-the-first-sketch-differs', 'events-1']);
  });

  it('find a citation of a missing heading or file, a SPEC section and an issue number', () => {
    const docs: Record<string, string> = { 'docs/contract.md': '## Events\n', 'README.md': '# huddle\n' };
    const lines = [
      '// fine: docs/contract.md#events',
      '// wrong anchor: docs/contract.md#event',
      '// missing file: docs/nowhere.md',
      '// The bus (SPEC section 4): one inbox each',
      '// see SPEC §8',
      '// Issue 10, finding 1: scrolling',
      '// seed 004 says so',
      "writeFileSync('docs/style.md', 'a fixture, not a citation');",
      "it('follows README.md#nowhere', () => {});",
    ];
    const found = checkSource('src/x.ts', lines.join('\n'), (file) => docs[file]).map((p) => p.where);
    expect(found).toEqual(['src/x.ts:2', 'src/x.ts:3', 'src/x.ts:4', 'src/x.ts:5', 'src/x.ts:5', 'src/x.ts:6', 'src/x.ts:7', 'src/x.ts:9']);
  });

  it('find a relative link that does not resolve', () => {
    const files: Record<string, string> = { 'docs/contract.md': '## Events\n', 'README.md': '' };
    const markdown =
      '[ok](contract.md#events) [bad anchor](contract.md#nope) [gone](missing.md) [up](../README.md) [web](https://example.com/x.md)\n[self](#events)';
    const found = checkLinks(
      'docs/contract.md',
      markdown,
      (f) => files[f],
      (f) => f in files,
    ).map((p) => p.what);
    expect(found).toEqual(['links contract.md#nope: no heading #nope in docs/contract.md', 'links missing.md: docs/missing.md does not exist']);
  });
});

describe('the repository', () => {
  it('cites only docs and headings that exist, and no sketch sections or tracker numbers', () => {
    const files = [...['src', 'test', 'scripts', 'bench'].flatMap((dir) => walk(dir, [])), 'README.md', 'CONTRIBUTING.md', 'settings.schema.json'];
    const problems = files
      .filter((file) => file !== THIS_FILE)
      .flatMap((file) => {
        const text = readRepoFile(file);
        return text === undefined ? [] : checkSource(file, text, readRepoFile);
      });
    expect(describeProblems(problems)).toBe('');
    expect(files.length).toBeGreaterThan(300);
  });

  it('resolves every relative link of README.md, CONTRIBUTING.md and docs/*.md', () => {
    const markdown = [
      'README.md',
      'CONTRIBUTING.md',
      ...readdirSync(path.join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const problems = markdown.flatMap((file) => checkLinks(file, readRepoFile(file)!, readRepoFile, (relative) => existsSync(path.join(ROOT, relative))));
    expect(describeProblems(problems)).toBe('');
    expect(markdown).toEqual(expect.arrayContaining(['docs/contract.md', 'docs/architecture.md']));
  });
});
