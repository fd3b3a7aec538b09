// What a teammate with its own git worktree is told about it (appended to its system prompt).
import type { WorktreeInfo } from '../../runtime/workspace/worktree.js';

export function worktreeInstructions(worktree: WorktreeInfo): string {
  return `You work in your own git worktree, ${worktree.workspace.root}, on branch ${worktree.branch}: your files and your bash commands are there, and the others do not see your changes until your branch is merged. When a piece of work is done and checked, commit it there (git add -A && git commit -m "<what and why>") before you report; the lead or the user merges ${worktree.branch}. Do not merge other branches into yours unless asked. The task board and messages are shared with the team as usual.`;
}
