// Every system prompt and every turn or message huddle injects, rendered with fixed example inputs into a committed
// snapshot under __snapshots__/ (docs/contract.md#injected-turns): a change to what the model sees shows in review
// as a diff of these files. After changing a template on purpose: npx vitest run -u test/agents/prompts/prompts-snapshot.test.ts
//
// Each case goes through the code that sends the text where that code is a function of its inputs; protocol and
// review messages (sent from inside the tools) and the SessionStart wrapper are filled with the values their callers
// pass. The last test fails when a template in src/agents/prompts has no case, or a snapshot no longer has one.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test, vi } from 'vitest';
import type { Message } from '../../../src/runtime/store/bus.ts';
import type { Task } from '../../../src/runtime/store/board/task.ts';
import type { WorktreeInfo } from '../../../src/runtime/workspace/worktree.ts';

const filled = new Set<string>();
vi.mock('../../../src/agents/prompts/templates.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/agents/prompts/templates.ts')>();
  return {
    ...real,
    fill: (name: Parameters<typeof real.fill>[0], values: Parameters<typeof real.fill>[1]) => {
      filled.add(name);
      return real.fill(name, values);
    },
  };
});

const { autoClaimTurn, leadSystemPrompt, teammateSystemPrompt } = await import('../../../src/agents/prompts/prompts.ts');
const { compactedTurn, restartedTurn } = await import('../../../src/agents/prompts/identity-block.ts');
const { worktreeInstructions } = await import('../../../src/agents/prompts/worktree-prompt.ts');
const { readProjectInstructions } = await import('../../../src/agents/prompts/memory.ts');
const { fill, templateNames } = await import('../../../src/agents/prompts/templates.ts');
const { summaryPrompt } = await import('../../../src/agents/loop/compaction.ts');
const { resumeTurn } = await import('../../../src/agents/loop/transcript-replay.ts');
const { reviewRequestedTurn } = await import('../../../src/agents/tools/review-tools.ts');
const { externalInstructions } = await import('../../../src/agents/external/instructions.ts');
const { loadRoles } = await import('../../../src/agents/lifecycle/roles.ts');
const { formatInbox } = await import('../../../src/runtime/inbox.ts');

const here = path.dirname(fileURLToPath(import.meta.url));
const templateDir = path.resolve(here, '../../../src/agents/prompts');
const snapshotDir = path.join(here, '__snapshots__');

// Fixed inputs: the same every run, so a snapshot changes only when the text does.
const lead = { name: 'lead', role: 'lead', team: 'acme' };
const alice = { name: 'alice', role: 'coder', team: 'acme' };
const workspaceRoot = '/work/acme';
const worktree = { workspace: { root: '/work/acme/.team/worktrees/alice' }, branch: 'huddle/alice' } as WorktreeInfo;
const roleBody = 'As a coder you write and change code. Keep changes small and focused.';
/** A built-in role's body, as a teammate of that role gets it (no .team/roles here). */
const builtInRole = (name: string) => loadRoles(path.join(tmpdir(), 'huddle-no-team-dir')).roles.get(name)!.body;
const ownedTasks = [
  { id: 3, subject: 'Parse the config file' },
  { id: 5, subject: 'Add a --dry-run flag\nwith a second line' },
];
const task: Task = {
  id: 7,
  subject: 'Add input validation',
  description: 'Reject empty names with a clear error.',
  status: 'review',
  owner: 'alice',
  blockedBy: [],
  blocks: [],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};
const messages: Message[] = [
  { id: 'm1', type: 'message', from: 'user', to: 'lead', content: 'Please also update the README.', ts: '2026-01-01T00:00:01.000Z' },
  { id: 'm2', type: 'message', from: 'alice', to: 'lead', content: 'Done: src/config.ts parses the file.', ts: '2026-01-01T00:00:02.000Z' },
  { id: 'm3', type: 'message', from: 'huddle', to: 'lead', content: '[huddle] bob stopped.', ts: '2026-01-01T00:00:03.000Z' },
];

const scratch = mkdtempSync(path.join(tmpdir(), 'huddle-prompts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A workspace and home with one instruction file of each kind, a refused import, a cut and a file left out. */
function projectInstructions(): string {
  const home = path.join(scratch, 'home');
  const workspace = path.join(scratch, 'workspace');
  mkdirSync(path.join(home, '.claude'), { recursive: true });
  mkdirSync(path.join(workspace, 'docs'), { recursive: true });
  writeFileSync(path.join(home, '.claude', 'CLAUDE.md'), 'Answer in British English.\n');
  writeFileSync(path.join(workspace, 'CLAUDE.md'), 'Run npm test before you report.\nSee @docs/style.md and @/etc/hostname.\n');
  writeFileSync(path.join(workspace, 'docs', 'style.md'), 'Two spaces, single quotes.\n');
  writeFileSync(path.join(workspace, 'AGENTS.md'), `Agents: ${'keep commits small. '.repeat(6)}\n`);
  writeFileSync(path.join(workspace, 'CLAUDE.local.md'), 'My local notes.\n');
  return readProjectInstructions({ workspaceRoot: workspace, home, maxChars: 150 }).text;
}

/** An external CLI's instructions without the machine's own ~/.claude/CLAUDE.md in them. */
function external(kind: 'claude-code' | 'codex', planMode: boolean): string {
  const empty = path.join(scratch, `empty-${kind}`);
  mkdirSync(empty, { recursive: true });
  const home = process.env.HOME;
  process.env.HOME = empty;
  try {
    return externalInstructions({
      identity: alice,
      kind,
      cwd: worktree.workspace.root,
      workspaceRoot: empty,
      roleBody,
      worktreeNote: worktreeInstructions(worktree),
      planMode,
    });
  } finally {
    process.env.HOME = home;
  }
}

/**
 * A system prompt in two blocks (src/runtime/model/system-prompt.ts), as the model reads them: the block every
 * agent of the role shares (marked for the prompt cache), then the agent's own.
 */
function blocks(system: { shared: string; own: string }): string {
  return `${system.shared}\n\n----- cache breakpoint: above, the same for every agent of this role; below, this agent's own -----\n\n${system.own}`;
}

/** Snapshot name (a file in __snapshots__) → what huddle sends for the fixed inputs. */
const cases: Record<string, () => string> = {
  'lead-system': () => blocks(leadSystemPrompt(lead, workspaceRoot)),
  'teammate-system': () => blocks(teammateSystemPrompt(alice, workspaceRoot, '', 'lead')),
  'teammate-system-coder-with-worktree': () => blocks(teammateSystemPrompt(alice, workspaceRoot, builtInRole('coder'), 'lead', worktreeInstructions(worktree))),
  'teammate-system-tester': () => blocks(teammateSystemPrompt({ ...alice, role: 'tester' }, workspaceRoot, builtInRole('tester'), 'lead')),
  'teammate-system-reviewer': () => blocks(teammateSystemPrompt({ ...alice, role: 'reviewer' }, workspaceRoot, builtInRole('reviewer'), 'lead')),
  'project-instructions': projectInstructions,
  'session-start-context': () => fill('session-start-context', { context: 'Branch main; 2 uncommitted files.' }),
  'external-teammate-claude-code': () => external('claude-code', false),
  'external-teammate-codex-plan-mode': () => external('codex', true),
  'turn-inbox': () => formatInbox(messages),
  'turn-auto-claimed': () => autoClaimTurn({ id: 3, subject: 'Parse the config file' }),
  'turn-auto-claimed-with-description': () => autoClaimTurn({ id: 3, subject: 'Parse the config file', description: 'YAML or JSON.\nErrors name the line.' }),
  'turn-review-requested-first': () => reviewRequestedTurn(task, 3),
  'turn-review-requested-again': () => reviewRequestedTurn({ ...task, owner: null, review_rounds: 1, review_feedback: 'The error message names no field.' }, 3),
  'turn-review-requested-third': () => reviewRequestedTurn({ ...task, description: '', review_rounds: 2, review_feedback: 'Still no test.' }, 3),
  'compaction-summary-request-auto': () => summaryPrompt('[user]\nParse the config file.', 'auto', undefined),
  'compaction-summary-request-focus': () => summaryPrompt('[user]\nParse the config file.', 'manual', 'the open review'),
  'turn-compacted': () => compactedTurn(alice, '.team/transcripts/alice-1.jsonl', ownedTasks, 'You parsed the config; tests pass.', false),
  'turn-compacted-mid-turn': () => compactedTurn(alice, '.team/transcripts/alice-1.jsonl', [], 'You parsed the config.', true),
  'turn-restarted': () => restartedTurn(alice, ownedTasks, 'You were adding a --dry-run flag.'),
  'turn-restarted-nothing-to-summarise': () => restartedTurn(alice, [], ''),
  'turn-resumed': () => resumeTurn(alice, ownedTasks),
  'turn-resumed-after-crash-with-inbox': () => resumeTurn(lead, [], { interrupted: 2, inbox: formatInbox(messages.slice(0, 1)) }),
  'message-shutdown-request': () => fill('message-shutdown-request', { reason: 'the work is done', requestId: 'shutdown_1a2b3c4d' }),
  'message-shutdown-timed-out': () => fill('message-shutdown-timed-out', { teammate: 'alice', requestId: 'shutdown_1a2b3c4d' }),
  'message-shutdown-approved': () => fill('message-shutdown-response', { approve: true, teammate: 'alice', reason: '' }),
  'message-shutdown-declined': () => fill('message-shutdown-response', { approve: false, teammate: 'alice', reason: 'tests are still running' }),
  'message-shutdown-declined-no-reason': () => fill('message-shutdown-response', { approve: false, teammate: 'alice', reason: '' }),
  'message-teammate-failed': () => fill('message-teammate-failed', { teammate: 'alice', error: 'the model API refused the key (401)' }),
  'message-teammate-stalled': () => fill('message-teammate-stalled', { teammate: 'alice', silent: '300 s' }),
  'message-teammate-stopped': () => fill('message-teammate-stopped', { teammate: 'alice', reason: 'its worker left', tasks: '', several: false }),
  'message-teammate-stopped-with-tasks': () =>
    fill('message-teammate-stopped', { teammate: 'alice', reason: 'its worker left', tasks: '#3, #5', several: true }),
  'message-plan-approval-request': () => fill('message-plan-approval-request', { teammate: 'alice', requestId: 'plan_5e6f7a8b' }),
  'message-plan-approved': () => fill('message-plan-decision', { approve: true, feedback: '', edited: '', note: '' }),
  'message-plan-approved-with-feedback': () => fill('message-plan-decision', { approve: true, feedback: 'start with the parser', edited: '', note: '' }),
  'message-plan-not-approved': () => fill('message-plan-decision', { approve: false, feedback: 'split it into two tasks', edited: '', note: '' }),
  'message-plan-not-approved-no-feedback': () => fill('message-plan-decision', { approve: false, feedback: '', edited: '', note: '' }),
  'message-plan-approved-with-edits': () =>
    fill('message-plan-decision', { approve: true, feedback: '', edited: '1. Parse the config.\n2. Test it.', note: '' }),
  'message-changes-requested': () => fill('message-changes-requested', { id: 7, subject: task.subject, rounds: 1, maxRounds: 3, feedback: 'Add a test.' }),
  'message-review-limit': () =>
    fill('message-review-limit', { id: 7, subject: task.subject, owner: 'alice', rounds: 3, once: false, maxRounds: 3, feedback: 'Still no test.' }),
  'message-review-owner-gone': () =>
    fill('message-review-owner-gone', { id: 7, subject: task.subject, owner: 'alice', status: 'shutdown', feedback: 'Add a test.' }),
};

describe('what huddle says to the model', () => {
  for (const [name, render] of Object.entries(cases)) {
    test(name, async () => {
      await expect(render()).toMatchFileSnapshot(path.join(snapshotDir, `${name}.txt`));
    });
  }

  // Runs after the cases above (tests in a file run in order).
  test('every template has a case, and every snapshot a case', () => {
    const templates = readdirSync(templateDir)
      .filter((file) => file.endsWith('.md'))
      .map((file) => file.slice(0, -'.md'.length));
    expect(templates.filter((name) => !(templateNames as string[]).includes(name)).map((name) => `${name}.md is not imported by templates.ts`)).toEqual([]);
    expect(templates.filter((name) => !filled.has(name)).map((name) => `${name}.md has no case in this test`)).toEqual([]);
    const snapshots = readdirSync(snapshotDir).map((file) => file.replace(/\.txt$/, ''));
    expect(snapshots.filter((name) => !(name in cases)).map((name) => `__snapshots__/${name}.txt belongs to no case`)).toEqual([]);
  });
});
