// Project memory (docs/contract.md#injected-turns): the instructions users already wrote for their agents —
// ~/.claude/CLAUDE.md, and CLAUDE.md, .claude/CLAUDE.md and AGENTS.md at the workspace root — with
// `@path` imports read as Claude Code reads them (relative to the importing file, `~/` for home,
// at most five hops, each file once, never inside code spans or blocks), composed into one bounded
// block for every agent's context. ProjectMemory re-reads it when a file changes (checked on use).
import { readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const DEFAULT_MEMORY_CHARS = 40_000;
/** Claude Code follows imports at most this many hops deep. */
export const MAX_IMPORT_DEPTH = 5;

export interface MemoryOptions {
  workspaceRoot: string;
  /** The user's home (default: os.homedir()); tests point it at a temp dir. */
  home?: string;
  /** Characters of instructions in all (settings `memory.maxChars`); the rest is cut with a note. */
  maxChars?: number;
}

export interface MemoryFile {
  path: string;
  /** As shown to the model: workspace-relative, or ~/… */
  label: string;
  importedBy?: string;
  chars: number;
  /** Characters actually included (less than `chars` when cut). */
  included: number;
}

export interface ProjectInstructions {
  /** The block to put into an agent's context; empty when there are no instruction files. */
  text: string;
  files: MemoryFile[];
  /** Imports that were skipped: too deep, unreadable. */
  notes: string[];
  truncated: boolean;
}

interface Root {
  file: string;
  describe: string;
}

function roots(workspaceRoot: string, home: string): Root[] {
  return [
    { file: path.join(home, '.claude', 'CLAUDE.md'), describe: "the user's own instructions, for every project" },
    { file: path.join(workspaceRoot, 'CLAUDE.md'), describe: "the project's instructions, checked into the codebase" },
    { file: path.join(workspaceRoot, '.claude', 'CLAUDE.md'), describe: "the project's instructions, checked into the codebase" },
    { file: path.join(workspaceRoot, 'AGENTS.md'), describe: "the project's instructions for agents, checked into the codebase" },
  ];
}

interface Loaded {
  file: string;
  real: string;
  text: string;
  describe: string;
  importedBy?: string;
}

/** Reads and composes the instructions now. Never throws: an unreadable file is skipped. */
export function readProjectInstructions(options: MemoryOptions): ProjectInstructions & { watched: string[] } {
  const home = options.home ?? os.homedir();
  const maxChars = options.maxChars ?? DEFAULT_MEMORY_CHARS;
  const seen = new Set<string>();
  const loaded: Loaded[] = [];
  const notes: string[] = [];
  const watched = new Set<string>();
  const label = (file: string) => labelFor(file, options.workspaceRoot, home);

  const visit = (file: string, describe: string, depth: number, importedBy?: string) => {
    watched.add(file);
    const read = readText(file);
    if (!read || seen.has(read.real)) return;
    seen.add(read.real);
    loaded.push({ file, real: read.real, text: read.text, describe, ...(importedBy ? { importedBy } : {}) });
    for (const target of findImports(read.text)) {
      const resolved = resolveImport(target, path.dirname(file), home);
      if (depth >= MAX_IMPORT_DEPTH) {
        if (readText(resolved)) notes.push(`@${target} in ${label(file)} was not read: imports go at most ${MAX_IMPORT_DEPTH} levels deep`);
        continue;
      }
      visit(resolved, `imported by ${label(file)}`, depth + 1, label(file));
    }
  };
  for (const root of roots(options.workspaceRoot, home)) visit(root.file, root.describe, 0);

  const files: MemoryFile[] = [];
  if (!loaded.length) return { text: '', files, notes, truncated: false, watched: [...watched] };

  const sections: string[] = [];
  let room = maxChars;
  let truncated = false;
  const left: string[] = [];
  for (const item of loaded) {
    const body = item.text.trim();
    const name = label(item.file);
    if (room <= 0) {
      left.push(name);
      files.push({ path: item.file, label: name, chars: body.length, included: 0, ...(item.importedBy ? { importedBy: item.importedBy } : {}) });
      continue;
    }
    let shown = body;
    const included = Math.min(body.length, room);
    if (body.length > room) {
      shown = `${body.slice(0, room)}\n[… ${name} is cut here: ${room.toLocaleString('en-US')} of ${body.length.toLocaleString('en-US')} characters shown. Project instructions are limited to ${maxChars.toLocaleString('en-US')} characters; keep them short or raise memory.maxChars.]`;
      truncated = true;
    }
    room -= Math.min(body.length, room);
    sections.push(`Contents of ${name} (${item.describe}):\n\n${shown}`);
    files.push({ path: item.file, label: name, chars: body.length, included, ...(item.importedBy ? { importedBy: item.importedBy } : {}) });
  }
  if (left.length) {
    truncated = true;
    sections.push(`[… left out, over the ${maxChars.toLocaleString('en-US')}-character limit for project instructions: ${left.join(', ')}]`);
  }
  const text = [
    '<project-instructions>',
    'These are instructions from the project and its user (CLAUDE.md, AGENTS.md). Follow them; they take precedence over your defaults, though not over what the person or your lead asks of you now.',
    '',
    sections.join('\n\n'),
    '</project-instructions>',
  ].join('\n');
  return { text, files, notes, truncated, watched: [...watched] };
}

/**
 * The instructions of one workspace, kept current: `current()` checks the files it read (and the
 * ones that may appear) and re-reads only when one changed. Cheap enough to call before every model call.
 */
export class ProjectMemory {
  readonly #options: MemoryOptions;
  #instructions: ProjectInstructions | undefined;
  #signature = '';
  #watched: string[] = [];
  #version = 0;

  constructor(options: MemoryOptions) {
    this.#options = options;
  }

  /** Bumped every time the composed text changes. */
  get version(): number {
    return this.#version;
  }

  current(): { instructions: ProjectInstructions; changed: boolean } {
    if (this.#instructions && signatureOf(this.#watched) === this.#signature) return { instructions: this.#instructions, changed: false };
    const { watched, ...instructions } = readProjectInstructions(this.#options);
    const changed = instructions.text !== this.#instructions?.text;
    this.#watched = watched;
    this.#signature = signatureOf(watched);
    this.#instructions = instructions;
    if (changed) this.#version += 1;
    return { instructions, changed };
  }
}

function signatureOf(files: string[]): string {
  return files
    .map((file) => {
      try {
        const stat = statSync(file);
        return `${file}:${stat.mtimeMs}:${stat.size}:${stat.ino}`;
      } catch {
        return `${file}:-`;
      }
    })
    .join('\n');
}

function readText(file: string): { real: string; text: string } | undefined {
  try {
    if (!statSync(file).isFile()) return undefined;
    const text = readFileSync(file, 'utf8');
    if (text.includes('\0')) return undefined; // a binary file is not instructions
    return { real: realpathSync(file), text };
  } catch {
    return undefined;
  }
}

/** `@path` references outside code blocks and code spans, in order. */
export function findImports(markdown: string): string[] {
  const found: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    const prose = line.replace(/(`+)[^`]*?\1/g, ' ');
    for (const match of prose.matchAll(/(?:^|[\s(])@((?:~\/|\.{1,2}\/|\/)?[^\s`()<>"']+)/g)) {
      const target = match[1]!.replace(/[.,;:!?]+$/, '');
      if (target && !found.includes(target)) found.push(target);
    }
  }
  return found;
}

function resolveImport(target: string, dir: string, home: string): string {
  if (target.startsWith('~/')) return path.join(home, target.slice(2));
  return path.resolve(dir, target);
}

function labelFor(file: string, workspaceRoot: string, home: string): string {
  const inWorkspace = path.relative(workspaceRoot, file);
  if (!inWorkspace.startsWith('..') && !path.isAbsolute(inWorkspace)) return inWorkspace;
  const inHome = path.relative(home, file);
  if (!inHome.startsWith('..') && !path.isAbsolute(inHome)) return `~/${inHome}`;
  return file;
}
