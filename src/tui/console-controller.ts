// Intents from the screen to the team: what the person's keys and commands ask for. The
// components never touch the runtime; they call these, and see the effects as events.
import type { Team } from '../agents/team.js';
import type { ApprovalDecision } from '../runtime/store/approvals.js';
import { LEAD_NAME } from '../runtime/vocabulary.js';
import type { ConsoleStore, Flash } from './state/console-store.js';
import { patchAgent } from './state/console-store.js';
import { appendItem, itemId } from './state/transcript.js';
import { formatTokens } from './components/glyphs.js';
import { listWorktreeNames, MergeConflictError, mergeWorktree, removeWorktree, worktreeDiff, worktreeStatus } from '../runtime/workspace/worktree.js';

export class ConsoleController {
  readonly team: Team;
  readonly store: ConsoleStore;
  readonly #onQuit: () => void;
  readonly #unsubscribeBoard: () => void;
  readonly #detachApprovals: () => void;

  constructor(team: Team, store: ConsoleStore, onQuit: () => void) {
    this.team = team;
    this.store = store;
    this.#onQuit = onQuit;
    this.#unsubscribeBoard = team.ctx.board.onChange(() => void this.refreshTasks());
    // The person is here to answer: ask mode (the console's default) can put questions to them.
    this.#detachApprovals = team.approvals.attachAnswerer();
    for (const member of team.ctx.roster.members()) {
      store.setState((state) =>
        patchAgent(state, member.name, () => ({
          role: member.role,
          status: member.status,
          reason: (member.status_reason ?? member.error) as string | undefined,
        })),
      );
    }
    void this.refreshTasks();
  }

  close(): void {
    this.#unsubscribeBoard();
    this.#detachApprovals();
  }

  /** The person's answer to a tool call waiting in the "needs you" queue (y, n, a in /approvals). */
  answerApproval(id: string, decision: ApprovalDecision): string {
    const request = this.team.approvals.list().find((r) => r.id === id);
    if (!request || !this.team.approvals.resolve(id, decision)) return 'that request is no longer waiting';
    if (decision === 'deny') return `denied: ${request.summary}`;
    if (decision === 'always') {
      return request.prefixes.length
        ? `approved; ${request.prefixes.map((p) => `'${p}'`).join(', ')} added to .team/allow.json`
        : `approved once: a write to ${request.summary} cannot be allow-listed`;
    }
    return `approved: ${request.summary}`;
  }

  async refreshTasks(): Promise<void> {
    const tasks = await this.team.ctx.board.list().catch(() => undefined);
    if (tasks) this.store.setState({ tasks });
  }

  /** Text typed into a pane: a prompt for the lead, a message for a teammate. */
  async sendTo(agent: string, text: string): Promise<void> {
    if (agent === LEAD_NAME) {
      this.team.lead.prompt(text);
      return;
    }
    const teammate = this.team.teammates.get(agent);
    if (!teammate || teammate.finished) {
      this.flash(`${agent} has stopped; /spawn it again to give it work`, 'warn');
      return;
    }
    // Through the bus: it reaches the teammate exactly once, mid-turn or by waking it from idle.
    await this.team.bus.send({ type: 'message', from: 'user', to: agent, content: text });
  }

  interrupt(agent: string): boolean {
    if (agent === LEAD_NAME) {
      if (!this.team.lead.loop.running) return false;
      this.team.lead.interrupt();
      return true;
    }
    const teammate = this.team.teammates.get(agent);
    if (!teammate?.loop.running) return false;
    teammate.interrupt();
    return true;
  }

  async spawn(name: string, role: string, prompt: string): Promise<string> {
    return this.team.spawn({ name, role, prompt }, 'user');
  }

  async shutdown(name: string, now: boolean): Promise<string> {
    if (now) {
      const teammate = this.team.teammates.get(name);
      if (!teammate || teammate.finished) throw new Error(`no running teammate named '${name}'`);
      teammate.stopNow('stopped by the person');
      return `stopping ${name}`;
    }
    const requestId = await this.team.requestShutdown(name);
    return `asked ${name} to shut down (${requestId})`;
  }

  async broadcast(text: string): Promise<number> {
    const sent = await this.team.bus.broadcast('user', text);
    return sent.length;
  }

  setModel(model: string): void {
    this.team.lead.loop.model = model;
    this.team.ctx.config.model = model;
    this.store.setState({ model });
  }

  /**
   * `/compact`: summarises an agent's context, in view or not. Between turns it happens now and
   * this resolves when done; mid-turn it happens before the agent's next model call.
   */
  async compact(agent: string, focus?: string): Promise<string> {
    const target = agent === LEAD_NAME ? this.team.lead : this.team.teammates.get(agent);
    if (!target) throw new Error(`no agent named '${agent}'`);
    if (target !== this.team.lead && this.team.teammates.get(agent)?.finished) throw new Error(`${agent} has stopped; nothing to compact`);
    const { deferred, done } = target.compact(focus || undefined);
    if (deferred) return `${agent} is in a turn: its context will be compacted before its next model call`;
    const result = await done;
    return `compacted ${agent}: ${formatTokens(result.beforeTokens)} → ${formatTokens(result.afterTokens)} tokens (transcript: ${result.file})`;
  }

  /** Forgets an agent's conversation (its log on disk keeps it) and clears its pane. */
  clear(agent: string): void {
    const target = agent === LEAD_NAME ? this.team.lead : this.team.teammates.get(agent);
    if (target && !target.loop.running) target.loop.messages.length = 0;
    this.store.setState((state) => patchAgent(state, agent, () => ({ items: [] })));
  }

  /**
   * `/merge`: a teammate's branch into the workspace's current branch. On a conflict the merge is
   * aborted (both sides as they were): git's details go to `pane` as a notice, the error names the files.
   */
  async mergeWorktree(name: string, pane: string): Promise<string> {
    try {
      return (await mergeWorktree(this.team.ctx.workspace.root, name)).message;
    } catch (error) {
      if (!(error instanceof MergeConflictError)) throw error;
      this.note(pane, `${error.message}\n${error.details}`, 'error');
      throw new Error(`merge of huddle/${name} conflicts in ${error.files.join(', ')}; aborted, both branches unchanged (details in the pane)`);
    }
  }

  /** `/worktree remove`: never while the teammate still works in it. */
  async removeWorktree(name: string, force: boolean): Promise<string> {
    const teammate = this.team.teammates.get(name);
    if (teammate && !teammate.finished) throw new Error(`${name} is still running in its worktree; /shutdown ${name} first`);
    return removeWorktree(this.team.ctx.workspace.root, name, { force });
  }

  /** `/diff`: the teammate's worktree against its base, appended to its pane, which comes into view. */
  async showDiff(name: string): Promise<string> {
    const { text, status } = await worktreeDiff(this.team.ctx.workspace.root, name);
    const pending = status.uncommitted.length;
    const title = `${status.branch} against ${status.base}: ${status.unmerged.length} unmerged commit(s)${pending ? `, ${pending} uncommitted file(s)` : ''}`;
    this.store.setState((state) => ({
      ...patchAgent(state, name, (view) => ({ items: appendItem(view.items, { kind: 'diff', id: itemId(), title, diff: text }), unread: false })),
      focus: name,
      view: 'pane',
      scroll: { ...state.scroll, [name]: undefined },
    }));
    return `diff of ${status.branch} against ${status.base}`;
  }

  /** `/worktree`: every teammate worktree and what it holds, as a notice in `pane`. */
  async listWorktrees(pane: string): Promise<string> {
    const root = this.team.ctx.workspace.root;
    const names = await listWorktreeNames(root);
    if (names.length === 0) return 'no teammate worktrees (spawn with worktree: true to make one)';
    const lines: string[] = [];
    for (const name of names) {
      const status = await worktreeStatus(root, name);
      const where = status.exists ? `.team/worktrees/${name}` : 'no worktree';
      lines.push(`${name}: ${where}, ${status.branchExists ? status.branch : 'no branch'}, ${status.unmerged.length} unmerged commit(s) against ${status.base}, ${status.uncommitted.length} uncommitted file(s)`);
    }
    this.note(pane, lines.join('\n'));
    return `${names.length} worktree(s)`;
  }

  note(agent: string, text: string, tone: 'info' | 'warn' | 'error' = 'info'): void {
    this.store.setState((state) =>
      patchAgent(state, agent, (view) => ({ items: appendItem(view.items, { kind: 'notice', id: itemId(), text, tone }) })),
    );
  }

  flash(text: string, tone: Flash['tone'] = 'info'): void {
    this.store.setState({ flash: { text, tone } });
  }

  quit(): void {
    this.#onQuit();
  }
}
