// Project memory (docs/contract.md#injected-turns): the instructions users already wrote for their agents —
// ~/.claude/CLAUDE.md, and CLAUDE.md, .claude/CLAUDE.md, AGENTS.md and CLAUDE.local.md at the
// workspace root — with `@path` imports read as Claude Code reads them (relative to the importing
// file, `~/` for home, at most five hops, each file once, never inside code spans or blocks),
// composed into one bounded block for every agent's context. ProjectMemory re-reads it when a file
// changes (checked on use).
//
// huddle reads these files in its own process, outside the sandbox, and what it reads goes to every
// model: so an import is confined (docs/trust.md). A file in the workspace imports only from the
// workspace (its real path, every symlink followed); the user's ~/.claude/CLAUDE.md, and the files
// it imports, may also import Markdown files from ~/.claude (the user wrote those, a repository
// did not). Never what the sandbox hides from agents, never the API key file. A refused import is
// said in the prompt where it stood and once to the person; the composed text is scrubbed of every
// registered secret.
import { closeSync, constants, fstatSync, openSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hiddenFromAgents } from '../../runtime/sandbox/hidden-paths.js';
import { scrub } from '../../runtime/secrets.js';
import { fill } from './templates.js';

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
  /** Imports that were skipped: too deep, or not allowed (outside the workspace, hidden from agents). */
  notes: string[];
  truncated: boolean;
}

/** Where an importing file may import from: the workspace only, or ~/.claude's Markdown as well. */
type Reach = 'workspace' | 'user';

interface Root {
  file: string;
  describe: string;
  reach: Reach;
}

function roots(workspaceRoot: string, home: string): Root[] {
  return [
    { file: path.join(home, '.claude', 'CLAUDE.md'), describe: "the user's own instructions, for every project", reach: 'user' },
    { file: path.join(workspaceRoot, 'CLAUDE.md'), describe: "the project's instructions, checked into the codebase", reach: 'workspace' },
    { file: path.join(workspaceRoot, '.claude', 'CLAUDE.md'), describe: "the project's instructions, checked into the codebase", reach: 'workspace' },
    { file: path.join(workspaceRoot, 'AGENTS.md'), describe: "the project's instructions for agents, checked into the codebase", reach: 'workspace' },
    { file: path.join(workspaceRoot, 'CLAUDE.local.md'), describe: "the user's private instructions for this project, not checked in", reach: 'workspace' },
  ];
}

interface Loaded {
  file: string;
  real: string;
  text: string;
  describe: string;
  importedBy?: string;
  /** Imports of this file that were not read, and why: said where the file's contents are. */
  refused: string[];
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

  const places = confinement(options.workspaceRoot, home);
  const refuse = (text: string, note: string, into?: Loaded) => {
    into?.refused.push(text);
    if (!notes.includes(note)) notes.push(note);
  };

  const visit = (file: string, describe: string, reach: Reach, depth: number, importedBy?: Loaded, target?: string) => {
    watched.add(file);
    // The user's own ~/.claude/CLAUDE.md may be a link into their dotfiles: they chose it, not a repository.
    const read = readConfined(file, reach, places, home, reach === 'user' && depth === 0);
    if (!read) return;
    if ('refused' in read) {
      const what = target ? `@${target}` : label(file);
      refuse(
        `(import not allowed: ${what} — ${read.refused})`,
        `${target ? `@${target} in ${importedBy ? label(importedBy.file) : '?'}` : label(file)} was not read: ${read.refused}`,
        importedBy,
      );
      return;
    }
    if (seen.has(read.real)) return;
    seen.add(read.real);
    const item: Loaded = { file, real: read.real, text: read.text, describe, refused: [], ...(importedBy ? { importedBy: label(importedBy.file) } : {}) };
    loaded.push(item);
    // A file the user keeps in ~/.claude reaches ~/.claude; anything in the workspace reaches the workspace only.
    const nextReach: Reach = reach === 'user' && (depth === 0 || isInside(read.real, places.claudeDir)) ? 'user' : 'workspace';
    for (const importTarget of findImports(read.text)) {
      const resolved = resolveImport(importTarget, path.dirname(file), home);
      if (depth >= MAX_IMPORT_DEPTH) {
        if (isFile(resolved)) notes.push(`@${importTarget} in ${label(file)} was not read: imports go at most ${MAX_IMPORT_DEPTH} levels deep`);
        continue;
      }
      visit(resolved, `imported by ${label(file)}`, nextReach, depth + 1, item, importTarget);
    }
  };
  for (const root of roots(options.workspaceRoot, home)) visit(root.file, root.describe, root.reach, 0);
  for (let i = 0; i < notes.length; i++) notes[i] = scrub(notes[i]!);

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
    const included = Math.min(body.length, room);
    const cut = body.length > room;
    if (cut) truncated = true;
    sections.push(
      fill('project-instructions-file', {
        file: name,
        describe: item.describe,
        text: body.slice(0, included),
        cut,
        shown: room.toLocaleString('en-US'),
        total: body.length.toLocaleString('en-US'),
        maxChars: maxChars.toLocaleString('en-US'),
        refused: item.refused.join('\n'),
      }),
    );
    room -= included;
    files.push({ path: item.file, label: name, chars: body.length, included, ...(item.importedBy ? { importedBy: item.importedBy } : {}) });
  }
  if (left.length) {
    truncated = true;
    sections.push(fill('project-instructions-left-out', { maxChars: maxChars.toLocaleString('en-US'), files: left.join(', ') }));
  }
  const text = fill('project-instructions', { sections: sections.join('\n\n') });
  // A secret written into an instruction file (or reached some way not foreseen) reaches no model.
  return { text: scrub(text), files, notes, truncated, watched: [...watched] };
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
        // Asked before every model call, and most of these files do not exist: no exception for that.
        const stat = statSync(file, { throwIfNoEntry: false });
        return stat ? `${file}:${stat.mtimeMs}:${stat.size}:${stat.ino}` : `${file}:-`;
      } catch {
        return `${file}:-`; // not a directory on the way, not allowed: as absent
      }
    })
    .join('\n');
}

function isFile(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false; // not a directory on the way, not allowed: as absent
  }
}

interface Places {
  /** The workspace's real path. */
  workspace: string;
  /** ~/.claude's real path. */
  claudeDir: string;
}

function confinement(workspaceRoot: string, home: string): Places {
  return { workspace: realOr(workspaceRoot), claudeDir: realOr(path.join(home, '.claude')) };
}

function realOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

function isInside(real: string, dir: string): boolean {
  return real === dir || real.startsWith(`${dir}/`);
}

/** Instruction files are small; anything larger is not read whole into huddle's memory. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * A file's text if `reach` allows it: its real path (every symlink and `..` resolved) inside the
 * workspace, or for the user's own files a Markdown file in ~/.claude; and never a path the
 * sandbox hides. The file opened is the one checked (its descriptor's path is checked again,
 * so a link swapped in between is caught). Undefined: missing, not a file, binary.
 */
function readConfined(
  file: string,
  reach: Reach,
  places: Places,
  home: string,
  anywhere = false,
): { real: string; text: string } | { refused: string } | undefined {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return undefined;
  }
  const refused = refusal(real, reach, places, home, anywhere);
  if (refused) return { refused };
  let fd: number | undefined;
  try {
    if (!statSync(real).isFile()) return undefined;
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return undefined;
    const opened = openedPath(fd) ?? real;
    if (opened !== real) {
      const again = refusal(opened, reach, places, home, anywhere);
      if (again) return { refused: again };
    }
    const text = readFileSync(fd, 'utf8');
    if (text.includes('\0')) return undefined; // a binary file is not instructions
    return { real: opened, text };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Why `real` may not be read for `reach`, in a few words; undefined when it may. */
function refusal(real: string, reach: Reach, places: Places, home: string, anywhere: boolean): string | undefined {
  const inWorkspace = isInside(real, places.workspace);
  const inClaude = reach === 'user' && isInside(real, places.claudeDir) && real.endsWith('.md');
  if (!inWorkspace && !inClaude && !anywhere) {
    return reach === 'user' ? 'outside the workspace and not a Markdown file in ~/.claude' : 'outside the workspace';
  }
  const hidden = hiddenFromAgents(real, home, inClaude || anywhere ? [places.claudeDir] : []);
  if (hidden) return 'agents may not read it (the sandbox hides it)';
  return undefined;
}

/** The real path of an open descriptor, where the system says (Linux). */
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
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
