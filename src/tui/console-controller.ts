// Intents from the screen to the team: what the person's keys and commands ask for. The
// components never touch the runtime; they call these, and see the effects as events. The
// controller talks only to the session (src/session), never to the team or its agents.
import type { ApprovalDecision } from '../runtime/store/approvals.js';
import { LEAD_NAME } from '../runtime/vocabulary.js';
import type { TeamSession, TerminalView } from '../session/team-session.js';
import { TEAM_SCOPE } from '../session/budget-intents.js';
import type { CommandIntents } from './commands/types.js';
import type { ConsoleStore, Flash } from './state/console-store.js';
import { patchAgent } from './state/console-store.js';
import { appendItem, itemId } from './render/transcript-items.js';
import { formatTokens } from './render/tokens.js';
import { formatSettingsRows, type SettingsRow } from '../runtime/settings/describe.js';
import type { UntrustedFile } from '../runtime/settings/trust.js';
import { formatMcpStatus } from '../runtime/mcp/status.js';
import { endpointOf } from '../runtime/model/connection-error.js';
import { summaryLines } from '../runtime/record/run-record.js';
import { Checkpoints } from '../runtime/workspace/checkpoints.js';
import { describeCheckpoints, rewind, rewoundLine } from '../runtime/workspace/rewind.js';
import { editInTerminal } from './terminal/external-editor.js';
import type { BacklogProgress } from '../session/backlog-progress.js';
import { backlogDir, loadLocalBacklog } from '../runtime/backlog/local-backlog.js';
import { issueBranch, issueSlugName, orderIssues } from '../runtime/backlog/issue.js';
import { existsSync } from 'node:fs';
import { BestOfRun, type BestOfOptions } from '../session/best-of-run.js';
import { pickBestOf } from '../session/best-of-pick.js';
import type { BestOfRecord } from '../runtime/record/best-of-record.js';
import { loadWorkflow } from '../workflow/load.js';
import { WorkflowRunner } from '../workflow/runner.js';

export class ConsoleController implements CommandIntents {
  readonly store: ConsoleStore;
  readonly #session: TeamSession;
  readonly #onQuit: () => void;
  readonly #unsubscribeBoard: () => void;
  readonly #detachPerson: () => void;
  #backlog: BacklogProgress | undefined;
  #stopBacklog: (() => void) | undefined;

  constructor(session: TeamSession, store: ConsoleStore, onQuit: () => void) {
    this.#session = session;
    this.store = store;
    this.#onQuit = onQuit;
    this.#unsubscribeBoard = session.onTasksChanged(() => void this.refreshTasks());
    // The person is here to answer: ask mode (the console's default) can put questions to them.
    this.#detachPerson = session.attachPerson();
    for (const member of session.members()) {
      store.setState((state) =>
        patchAgent(state, member.name, () => ({
          role: member.role,
          status: member.status,
          reason: (member.status_reason ?? member.error) as string | undefined,
          ...(typeof member.host === 'string' && member.host !== session.host ? { host: member.host } : {}),
        })),
      );
    }
    void this.refreshTasks();
  }

  /** The backlog this console works through (huddle --backlog SOURCE): /backlog shows it, live. */
  attachBacklog(source: string, progress: BacklogProgress): void {
    this.#backlog = progress;
    this.store.setState((state) => ({ backlog: { ...state.backlog, source, note: undefined } }));
    this.#stopBacklog = progress.watch((rows) => this.store.setState((state) => ({ backlog: { ...state.backlog, rows } })));
  }

  refreshBacklog(): void {
    if (this.#backlog) {
      const progress = this.#backlog;
      void progress.rows().then((rows) => this.store.setState((state) => ({ backlog: { ...state.backlog, rows } })));
      return;
    }
    // No backlog is worked through here: the local one is listed, not started (a run makes branches and spends).
    const root = this.#session.workspace.root;
    if (!existsSync(backlogDir(root))) {
      this.store.setState({
        backlog: {
          source: undefined,
          rows: [],
          note: 'No backlog here. Start the console with huddle --backlog local (.team/backlog/*.md) or --backlog github:OWNER/REPO?label=NAME.',
        },
      });
      return;
    }
    const { issues, skipped } = orderIssues(loadLocalBacklog(root));
    const rows = issues.map((issue) => ({
      number: issue.number,
      title: issue.title,
      url: issue.url,
      name: issueSlugName(issue),
      branch: issueBranch(issue),
      base: '',
      taskId: 0,
      started: false,
      shipped: false,
      costUsd: 0,
      phase: 'queued' as const,
      approver: '-',
    }));
    const note = `Not being worked through: huddle --backlog local starts it${skipped.length ? ` (${skipped.length} file${skipped.length === 1 ? '' : 's'} skipped: ${skipped.map((s) => `${s.source}: ${s.reason}`).join('; ')})` : ''}.`;
    this.store.setState({ backlog: { source: undefined, rows, note } });
  }

  close(): void {
    this.#stopBacklog?.();
    // A best-of run cut short by quitting waits for a pick as it is (huddle pick K, or none to remove them).
    this.#bestOf?.abandon('the console closed before it ended');
    this.#unsubscribeBoard();
    this.#detachPerson();
  }

  /** The person's answer to a request waiting in the "needs you" queue (y, n, a in /approvals). */
  answerApproval(id: string, decision: ApprovalDecision, reason?: string): string {
    return this.#session.answer(id, decision, reason);
  }

  /** The person rewrites a waiting plan in $EDITOR (e in /approvals); the console hands over the terminal meanwhile. */
  editPlan(id: string): { text: string; tone: 'info' | 'warn' } {
    const request = this.#session.waitingForPerson().find((r) => r.id === id);
    if (!request) return { text: 'that request is no longer waiting', tone: 'warn' };
    const result = editInTerminal(request.detail ?? request.summary, { mouse: this.store.getState().mouse });
    // The editor drew over the screen: the console draws itself again whole.
    this.store.setState((state) => ({ redraws: state.redraws + 1 }));
    if (result.kind === 'failed') return { text: result.message, tone: 'warn' };
    if (result.kind === 'unchanged') return { text: 'the plan is unchanged', tone: 'info' };
    if (!this.#session.revisePlan(id, result.text)) return { text: 'that request is no longer waiting', tone: 'warn' };
    // The queue's row shows the person's text from now on.
    const revised = this.#session.waitingForPerson().find((r) => r.id === id);
    if (revised)
      this.store.setState((state) => ({
        approvals: state.approvals.map((a) => (a.id === id ? { ...a, summary: revised.summary, detail: revised.detail } : a)),
      }));
    return { text: `${request.agent}'s plan now holds your edit: y approves it`, tone: 'info' };
  }

  async refreshTasks(): Promise<void> {
    // The board may be closing: no tasks to show is the right answer then.
    const tasks = await this.#session.tasks().catch(() => undefined);
    if (tasks) this.store.setState({ tasks });
  }

  /** Text typed into a pane: a prompt for the lead, a message for a teammate. */
  async sendTo(agent: string, text: string): Promise<void> {
    if (agent !== LEAD_NAME && !this.#session.isLive(agent)) {
      throw new Error(`${agent} has shut down, so nothing would read it; /spawn ${agent} ROLE PROMPT starts it again`);
    }
    // Shown in the pane at once as queued; it leaves the queue when it enters the agent's context.
    this.store.setState((state) => patchAgent(state, agent, (view) => ({ queued: [...(view.queued ?? []), text] })));
    if (agent === LEAD_NAME) {
      this.#session.prompt(text);
      return;
    }
    // Through the bus: it reaches the teammate exactly once, mid-turn or by waking it from idle.
    await this.#session.send(agent, text);
  }

  /** The screen of `agent` when it is a program in a terminal (a command teammate, a shell pane). */
  terminal(agent: string): TerminalView | undefined {
    return this.#session.terminal(agent);
  }

  /** Keys typed into a terminal pane, straight to its program. */
  typeIntoTerminal(agent: string, data: string): void {
    this.#session.terminal(agent)?.write(data);
  }

  /** `/shell` and `!cmd`: the person's shell in a pane (opened when none is), which comes into view. */
  async shell(command?: string): Promise<string> {
    const { name, message } = await this.#session.shell(command);
    this.store.setState((state) => ({ ...patchAgent(state, name, () => ({ role: 'shell' })), focus: name, view: 'pane' }));
    return message;
  }

  async summary(): Promise<string[]> {
    const { record, file } = await this.#session.runRecord();
    const lines = [`run record: ${file}`, ...summaryLines(record)];
    this.store.setState({ summary: lines });
    return lines;
  }

  interrupt(agent: string): boolean {
    return this.#session.interrupt(agent);
  }

  spawn(name: string, role: string, prompt: string): Promise<string> {
    return this.#session.spawn(name, role, prompt);
  }

  shutdown(name: string, now: boolean): Promise<string> {
    return this.#session.shutdown(name, { now });
  }

  broadcast(text: string): Promise<number> {
    return this.#session.broadcast(text);
  }

  setModel(model: string): void {
    this.#session.setModel(model);
    this.store.setState({ model });
  }

  /** `/restart`: a fresh loop for the agent (its workspace, tasks and a summary kept). */
  async restart(name: string): Promise<string> {
    return (await this.#session.restart(name)).message;
  }

  /**
   * `/compact`: summarises an agent's context, in view or not. Between turns it happens now and
   * this resolves when done; mid-turn it happens before the agent's next model call.
   */
  async compact(agent: string, focus?: string): Promise<string> {
    const outcome = await this.#session.compact(agent, focus);
    if (outcome.deferred) return `${agent} is in a turn: its context will be compacted before its next model call`;
    const { result } = outcome;
    return `compacted ${agent}: ${formatTokens(result.beforeTokens)} → ${formatTokens(result.afterTokens)} tokens (transcript: ${result.file})`;
  }

  /** Forgets an agent's conversation (its log on disk keeps it) and clears its pane; false while it is in a turn (nothing cleared). */
  clear(agent: string): boolean {
    if (!this.#session.clear(agent)) return false;
    this.store.setState((state) => patchAgent(state, agent, () => ({ items: [] })));
    return true;
  }

  /** `/cost`'s per-task lines (empty when nothing is tallied). */
  taskSpendLines(): string[] {
    return this.#session.taskSpendLines();
  }

  /** `/budget`: spend vs limits, one line per scope. */
  budgetLines(agents: string[]): string[] {
    return this.#session.budget.describe(agents);
  }

  /** `/budget SCOPE KIND AMOUNT`: the scope's limits now; throws with what is wrong. */
  setBudget(scope: string, kind: string, amount: string): string {
    return this.#session.budget.set(scope, kind, amount);
  }

  /** `/budget extend [SCOPE]`: without a scope, every scope whose limit is reached now. */
  extendBudget(scope: string | undefined, agents: string[]): string {
    const scopes = scope ? [scope] : [TEAM_SCOPE, ...agents].filter((name) => this.#session.budget.reached(name));
    if (scopes.length === 0) return 'no budget is reached; name one to raise it anyway: /budget extend team';
    return `extended ${this.#session.budget.extend(scopes).join('; ')}`;
  }

  /**
   * `/merge`: a teammate's branch into the workspace's current branch. On a conflict the merge is
   * aborted (both sides as they were): git's details go to `pane` as a notice, the error names the files.
   */
  async mergeWorktree(name: string, pane: string): Promise<string> {
    const outcome = await this.#session.worktrees.merge(name);
    if (outcome.kind === 'merged') return outcome.message;
    this.note(pane, `${outcome.message}\n${outcome.details}`, 'error');
    throw new Error(`merge of huddle/${name} conflicts in ${outcome.files.join(', ')}; aborted, both branches unchanged (details in the pane)`);
  }

  /** `/worktree remove`: never while the teammate still works in it. */
  removeWorktree(name: string, force: boolean): Promise<string> {
    return this.#session.worktrees.remove(name, force);
  }

  /** `/diff`: the teammate's worktree against its base, appended to its pane, which comes into view. */
  async showDiff(name: string): Promise<string> {
    const { title, diff, branch, base } = await this.#session.worktrees.diff(name);
    this.store.setState((state) => ({
      ...patchAgent(state, name, (view) => ({ items: appendItem(view.items, { kind: 'diff', id: itemId(), title, diff }), unread: false })),
      focus: name,
      view: 'pane',
      scroll: { ...state.scroll, [name]: undefined },
    }));
    return `diff of ${branch} against ${base}`;
  }

  #bestOf: BestOfRun | undefined;

  /**
   * `/best-of N TASK`: the run starts and its compare view opens at once, updated as candidates end;
   * its diffs are read when each one ends. Resolves when the run has started (it goes on behind).
   */
  startBestOf(options: Omit<BestOfOptions, 'say'>): string {
    if (this.#bestOf && this.#bestOf.record?.outcome.kind === 'running') throw new Error('a best-of run is under way already: /best-of shows it');
    const run = new BestOfRun(this.#session, { ...options, say: (line) => this.flash(line) });
    this.#bestOf = run;
    run.onChange((record) => this.#showBestOf(record));
    run.run().then(
      (record) =>
        this.flash(
          `best-of-${record.candidates.length} #${record.id}: ${record.verdict?.pick ? `the reviewer would merge ${record.verdict.pick}` : 'no verdict'}; p picks the selected candidate`,
        ),
      (error: Error) => this.flash(`best-of failed: ${error.message.split('\n')[0]}`, 'error'),
    );
    return `best-of-${options.n} started: ${options.n} candidates in their own worktrees`;
  }

  /** `/best-of` alone: the last run's compare view again. */
  reopenBestOf(): string | undefined {
    if (!this.store.getState().bestOf) return undefined;
    this.store.setState({ view: 'bestof', viewScroll: 0 });
    return 'the last best-of run';
  }

  #showBestOf(record: BestOfRecord): void {
    const copy = structuredClone(record);
    this.store.setState((state) => {
      const previous = state.bestOf?.record.id === copy.id ? state.bestOf : undefined;
      // The reviewer's pick is selected once it is known, unless the person moved already.
      const pickIndex = copy.verdict?.pick ? copy.candidates.findIndex((c) => c.name === copy.verdict?.pick) : -1;
      const selected = previous && (previous.selected !== 0 || pickIndex < 0) ? previous.selected : Math.max(0, pickIndex);
      return {
        bestOf: {
          record: copy,
          selected,
          diffs: previous?.diffs ?? {},
          detail: previous?.detail ?? false,
          confirming: previous?.confirming,
          busy: previous?.busy ?? false,
        },
        ...(previous ? {} : { view: 'bestof' as const, viewScroll: 0 }),
      };
    });
    for (const candidate of copy.candidates) {
      if (candidate.state === 'running' || this.store.getState().bestOf?.diffs[candidate.name] !== undefined) continue;
      this.#session.worktrees.diff(candidate.name).then(
        (diff) => this.#setDiff(copy.id, candidate.name, diff.diff),
        (error: Error) => this.#setDiff(copy.id, candidate.name, `(its diff could not be read: ${error.message})`),
      );
    }
  }

  #setDiff(id: number, name: string, diff: string): void {
    // What a person comparing needs: the changes. git's blob ids, and the empty uncommitted part
    // (huddle committed a candidate's leftovers), only take rows.
    const text = diff
      .replace(/^index [0-9a-f]+\.\.[0-9a-f]+.*\n/gm, '')
      .replace(/^# uncommitted in \S+\n\(none\)$/m, '')
      .trimEnd();
    this.store.setState((state) => (state.bestOf?.record.id === id ? { bestOf: { ...state.bestOf, diffs: { ...state.bestOf.diffs, [name]: text } } } : state));
  }

  /** p then y (or x then y) in the compare view: the pick merged and every candidate removed; one line says what happened. */
  async pickBestOf(choice: string): Promise<string> {
    const view = this.store.getState().bestOf;
    if (!view) throw new Error('no best-of run to pick from');
    try {
      const record = await pickBestOf(this.#session.workspace.root, choice, view.record.id);
      this.store.setState((state) => (state.bestOf ? { bestOf: { ...state.bestOf, record: structuredClone(record), busy: false, detail: false } } : state));
      return record.outcome.kind === 'merged' || record.outcome.kind === 'discarded' ? `${record.outcome.message}; candidates removed` : 'done';
    } catch (error) {
      this.store.setState((state) => (state.bestOf ? { bestOf: { ...state.bestOf, busy: false } } : state));
      throw error;
    }
  }

  /** `/worktree`: every teammate worktree and what it holds, one line each. */
  listWorktrees(): Promise<string[]> {
    return this.#session.worktrees.list();
  }

  /** `/rewind`: the workspace's checkpoints, newest first. */
  async listCheckpoints(): Promise<string[]> {
    return describeCheckpoints(await Checkpoints.for(this.#session.workspace.root).list(50));
  }

  async describeCheckpoint(id: string): Promise<string | undefined> {
    const found = /^[0-9a-f]{4,64}$/.test(id) ? await Checkpoints.for(this.#session.workspace.root).find(id) : undefined;
    return found ? describeCheckpoints([found])[0] : undefined;
  }

  /** `/rewind ID yes`: the workspace as checkpoint ID had it; the state before is checkpointed first. */
  async rewind(id: string, files: string[]): Promise<string> {
    const outcome = await rewind(Checkpoints.for(this.#session.workspace.root), id, { files });
    return `${rewoundLine(id, outcome)}; to undo: /rewind ${outcome.before.slice(0, 12)} yes`;
  }

  /** `/config [KEY]`: the effective settings, those set somewhere first, each with where it came from. */
  showConfig(filter?: string): string | undefined {
    const all = this.#session.settingsRows();
    const rows = filter ? all.filter((row) => row.key === filter || row.key.startsWith(`${filter}.`) || row.key.startsWith(`${filter}[`)) : all;
    if (!rows.length) return all.length ? `no setting '${filter}'; /config lists them all` : 'no settings were loaded for this session';
    const isDefault = (row: SettingsRow) => row.sources.length === 1 && row.sources[0] === 'default';
    const set = rows.filter((row) => !isDefault(row));
    const defaults = rows.filter(isDefault);
    const lines = [
      ...(filter ? [] : this.#connectionLines()),
      ...trustLines(this.#session.settingsTrust()),
      ...(set.length ? formatSettingsRows(set).split('\n') : ["(nothing set: every value is huddle's default)"]),
      ...(defaults.length
        ? [
            '',
            'defaults:',
            ...formatSettingsRows(defaults)
              .split('\n')
              .map((line) => line.replace(/\s+default$/, '')),
          ]
        : []),
    ];
    const title = `Settings${filter ? ` ${filter}` : ''} (${set.length} set, ${defaults.length} default${defaults.length === 1 ? '' : 's'}; files: ~/.config/huddle/settings.json, .team/settings.json, .team/settings.local.json, .mcp.json)`;
    this.store.setState({ page: { title, lines: lines.map((line) => this.#session.scrub(line)) } });
    return undefined;
  }

  /** `/config`'s first lines: the model's endpoint, where the key comes from (never the key), the permission mode, the sandbox. */
  #connectionLines(): string[] {
    const { baseURL, keySource, keyFile, permissionMode } = this.#session.describeConnection();
    const key =
      keySource === '--api-key-file'
        ? `from the file ${keyFile ?? '(--api-key-file)'}`
        : keySource
          ? `from the environment variable ${keySource}`
          : 'none (set ANTHROPIC_API_KEY or pass --api-key-file FILE)';
    const sandboxOff = this.store.getState().sandboxOff;
    return [
      `model endpoint   ${endpointOf(baseURL)}${baseURL ? ` (ANTHROPIC_BASE_URL=${baseURL})` : ' (the Anthropic API; ANTHROPIC_BASE_URL changes it)'}`,
      `API key          ${key}`,
      `permission mode  ${permissionMode}`,
      `sandbox          ${sandboxOff ? `off: ${sandboxOff.line}` : 'on: every agent command runs in bubblewrap'}`,
      '',
    ];
  }

  /** `/mcp`: each MCP server, its state, its tools and its last error. */
  showMcp(): void {
    this.store.setState({
      page: {
        title: 'MCP servers (.mcp.json, "mcpServers" in settings; roles.<role>.tools / denyTools pick them per role)',
        lines: formatMcpStatus(this.#session.mcpStatus()).split('\n'),
      },
    });
  }

  note(agent: string, text: string, tone: 'info' | 'warn' | 'error' = 'info'): void {
    this.store.setState((state) => patchAgent(state, agent, (view) => ({ items: appendItem(view.items, { kind: 'notice', id: itemId(), text, tone }) })));
  }

  // ---- /workflows ------------------------------------------------------------------------------

  #workflow: WorkflowRunner | undefined;

  /**
   * `/workflow run FILE`: runs a workflow on this console's team (docs/workflows.md), one at a time; /workflows shows
   * it. Its gates wait in the needs-you queue. Resolves once it started; how it ends is flashed then.
   */
  async runWorkflow(file: string): Promise<string> {
    if (this.#workflow && !['done', 'failed', 'stopped'].includes(this.#workflow.state.state)) {
      throw new Error(`the workflow '${this.#workflow.name}' is running; s in /workflows stops it first`);
    }
    const workflow = await loadWorkflow(file, this.#session.workspace.root);
    const runner = new WorkflowRunner(this.#session, workflow, { say: () => undefined });
    this.#workflow = runner;
    this.store.setState({ workflow: runner.state, workflowIndex: 0 });
    runner.onChange((state) => this.store.setState({ workflow: state }));
    runner.run().then(
      () => this.flash(`workflow ${workflow.name} done`),
      (error: Error) => this.flash(this.#session.scrub(`workflow ${workflow.name}: ${error.message}; /workflow run ${file} goes on where it stopped`), 'warn'),
    );
    return `workflow ${workflow.name} started: /workflows shows it`;
  }

  /** A key of /workflows: pause, resume or stop the run, or restart one step's agent. */
  async workflowAction(action: 'pause' | 'resume' | 'stop' | 'restart', agent?: string): Promise<string> {
    const runner = this.#workflow;
    if (!runner) return 'no workflow is running: /workflow run FILE starts one';
    switch (action) {
      case 'pause':
        return runner.pause() ? `${runner.name} paused: no new step starts (p resumes)` : `${runner.name} is not running`;
      case 'resume':
        return runner.resume() ? `${runner.name} resumed` : `${runner.name} is not paused`;
      case 'stop':
        return (await runner.stop()) ? `${runner.name} stopped; its unfinished steps go on when it is run again` : `${runner.name} is not running`;
      case 'restart':
        if (!agent) return 'no step selected';
        return (await runner.restart(agent)) ? `restarting ${agent}` : `${agent} is not at work (yet): only a running step's agent restarts`;
    }
  }

  flash(text: string, tone: Flash['tone'] = 'info'): void {
    this.store.setState({ flash: { text, tone } });
  }

  quit(): void {
    this.#onQuit();
  }
}

/** `/config`'s first lines: which workspace files that widen trust apply, and which wait (docs/trust.md). */
function trustLines({ trusted, untrusted }: { trusted: UntrustedFile[]; untrusted: UntrustedFile[] }): string[] {
  if (!trusted.length && !untrusted.length) return [];
  return [
    'workspace settings that widen trust:',
    ...trusted.map((f) => `  trusted  ${f.file}: ${f.settings.join(', ')}`),
    ...untrusted.map((f) => `  waiting  ${f.file}: ${f.settings.join(', ')} (ignored until you trust it: Ctrl+Y, or huddle trust)`),
    '',
  ];
}
