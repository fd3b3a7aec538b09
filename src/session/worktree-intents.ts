// Teammates' git worktrees as intents (/merge, /diff, /worktree): what a face may do with them,
// with the rules that need the team (a worktree is never removed while its teammate works in it).
import { listWorktreeNames, MergeConflictError, mergeWorktree, removeWorktree, worktreeDiff, worktreeStatus } from '../runtime/workspace/worktree.js';

/** A merge either went in, or conflicted and was aborted (both branches as they were). */
export type MergeOutcome = { kind: 'merged'; message: string } | { kind: 'conflict'; message: string; files: string[]; details: string };

export interface WorktreeDiff {
  /** One line: the branch against its base, unmerged commits, uncommitted files. */
  title: string;
  /** The unified diff. */
  diff: string;
  branch: string;
  base: string;
}

export class WorktreeIntents {
  readonly #root: string;
  readonly #isLive: (name: string) => boolean;

  constructor(root: string, isLive: (name: string) => boolean) {
    this.#root = root;
    this.#isLive = isLive;
  }

  /** A teammate's branch (huddle/NAME) into the workspace's current branch. */
  async merge(name: string): Promise<MergeOutcome> {
    try {
      return { kind: 'merged', message: (await mergeWorktree(this.#root, name)).message };
    } catch (error) {
      if (!(error instanceof MergeConflictError)) throw error;
      return { kind: 'conflict', message: error.message, files: error.files, details: error.details };
    }
  }

  /** The teammate's worktree against its base. */
  async diff(name: string): Promise<WorktreeDiff> {
    const { text, status } = await worktreeDiff(this.#root, name);
    const pending = status.uncommitted.length;
    const title = `${status.branch} against ${status.base}: ${status.unmerged.length} unmerged commit(s)${pending ? `, ${pending} uncommitted file(s)` : ''}`;
    return { title, diff: text, branch: status.branch, base: status.base };
  }

  /** Removes the worktree and its branch; never while the teammate still works in it. */
  async remove(name: string, force: boolean): Promise<string> {
    if (this.#isLive(name)) throw new Error(`${name} is still running in its worktree; /shutdown ${name} first`);
    return removeWorktree(this.#root, name, { force });
  }

  /** One line per teammate worktree: where it is, its branch, what is unmerged or uncommitted. */
  async list(): Promise<string[]> {
    const lines: string[] = [];
    for (const name of await listWorktreeNames(this.#root)) {
      const status = await worktreeStatus(this.#root, name);
      const where = status.exists ? `.team/worktrees/${name}` : 'no worktree';
      lines.push(
        `${name}: ${where}, ${status.branchExists ? status.branch : 'no branch'}, ${status.unmerged.length} unmerged commit(s) against ${status.base}, ${status.uncommitted.length} uncommitted file(s)`,
      );
    }
    return lines;
  }
}
