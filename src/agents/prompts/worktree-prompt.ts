// What a teammate with its own git worktree is told about it (appended to its system prompt).
import type { WorktreeInfo } from '../../runtime/workspace/worktree.js';
import { fill } from './templates.js';

export function worktreeInstructions(worktree: WorktreeInfo): string {
  return fill('teammate-worktree', { worktreeRoot: worktree.workspace.root, branch: worktree.branch });
}
