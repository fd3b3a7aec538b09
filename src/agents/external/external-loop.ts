// The turn loop of an external teammate: the same surface as huddle's own AgentLoop (running,
// interrupt, totals, the transcript built from its events), but a turn is handed to the agent's
// CLI through its driver. What the CLI does comes back as huddle's events, in the loop's order:
// the prompt, its text as text_delta (the pane streams it), tool_call and tool_result, then the
// turn's usage with its cost as the CLI reports it, and the final text. The budget gate runs
// before each turn; unread inbox messages join the turn; a stop (an approved shutdown, the idle
// tool) ends the CLI's turn after the tool call that asked for it.
import { AgentLoop, type AgentLoopOptions, type TurnOutcome, type TurnSource } from '../loop/agent-loop.js';
import { emptyUsage } from '../../runtime/model/pricing.js';
import type { ExternalDriver, TurnReport, TurnSink } from './driver.js';
import { checkpointForExternal, repairForExternal } from '../tools/checkpointed-tools.js';

export interface ExternalLoopHooks {
  /** May the agent run this tool (its CLI asks)? undefined: yes; else the reason it may not. */
  permission(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<string | undefined>;
  /** The CLI named its session: kept for a resume. */
  session(id: string): void;
  /** The program ended on its own: the teammate stops. */
  exited(why: string): void;
}

export class ExternalTurnLoop extends AgentLoop {
  readonly driver: ExternalDriver;
  readonly #options: AgentLoopOptions;
  readonly #hooks: ExternalLoopHooks;
  #busy = false;
  #abort: AbortController | undefined;
  /** Text for the CLI's next turn that entered the transcript outside a turn (a resume's note). */
  readonly carry: string[] = [];

  constructor(options: AgentLoopOptions, driver: ExternalDriver, hooks: ExternalLoopHooks) {
    super(options);
    this.#options = options;
    this.driver = driver;
    this.#hooks = hooks;
  }

  override get running(): boolean {
    return this.#busy;
  }

  override interrupt(): void {
    this.#abort?.abort();
  }

  override async runTurn(input: string, source: TurnSource = 'user'): Promise<TurnOutcome> {
    if (this.#busy) throw new Error(`${this.name} is already in a turn`);
    this.#busy = true;
    const abort = new AbortController();
    this.#abort = abort;
    try {
      return await this.#turn(input, source, abort);
    } finally {
      this.transcript.commit();
      this.#busy = false;
      this.#abort = undefined;
    }
  }

  async #turn(input: string, source: TurnSource, abort: AbortController): Promise<TurnOutcome> {
    const hooks = this.#options.hooks;
    const events = this.events;
    const halt = await hooks?.budgetGate?.(abort.signal);
    if (halt !== undefined) {
      if (!abort.signal.aborted) return { kind: 'stopped', text: halt };
      events.emit('error', { message: 'interrupted', fatal: false, interrupted: true });
      return { kind: 'interrupted' };
    }
    const parts = [...this.carry.splice(0)];
    if (input) {
      events.emit('prompt', { text: input, source });
      parts.push(input);
    }
    for (const item of (await hooks?.pendingInput?.()) ?? []) {
      const text = typeof item === 'string' ? item : item.text;
      events.emit('prompt', { text, source: typeof item === 'string' ? 'inbox' : item.source });
      parts.push(text);
    }

    let segment = '';
    let stopped = false;
    const started = new Map<string, number>();
    const sink: TurnSink = {
      text: (text) => {
        if (!text) return;
        const delta = segment ? `\n\n${text}` : text;
        segment += delta;
        events.emit('text_delta', { text: delta });
      },
      toolCall: (id, name, input) => {
        segment = '';
        started.set(id, performance.now());
        events.emit('tool_call', { id, name, input, summary: this.tools.summarize(name, input) || summarize(input) });
      },
      toolResult: (id, name, ok, content) => {
        const began = started.get(id);
        events.emit('tool_result', { id, name, ok, content, duration_ms: began === undefined ? 0 : Math.round(performance.now() - began) });
        void repairForExternal(this.workspace.root, events);
        // An approved shutdown or the idle tool: the turn ends after this call, as huddle's own do.
        if (!stopped && hooks?.shouldStop?.()) {
          stopped = true;
          abort.abort();
        }
      },
      notice: (message) => void events.emit('warning', { message }),
      permission: async (tool, input, signal) => {
        const refused = await this.#hooks.permission(tool, input, signal);
        if (refused === undefined) await checkpointForExternal(this.workspace.root, events, tool, summarize(input));
        return refused;
      },
      session: (id, model) => {
        if (model) this.model = model;
        this.#hooks.session(id);
      },
    };
    let report: TurnReport;
    // Its CLI runs its own tools: a checkpoint before the turn (and before each call it asks about).
    await checkpointForExternal(this.workspace.root, events, 'turn', parts.join(' '));
    try {
      report = await this.driver.runTurn(parts.join('\n\n'), sink, abort.signal);
    } catch (error) {
      report = { outcome: 'failed', text: '', error: error instanceof Error ? error.message : String(error) };
    }
    await repairForExternal(this.workspace.root, events);
    return this.#finish(report, segment, stopped);
  }

  #finish(report: TurnReport, segment: string, stopped: boolean): TurnOutcome {
    const events = this.events;
    if (report.model) this.model = report.model;
    if (report.outcome === 'failed') {
      events.emit('error', { message: report.error ?? `${this.driver.kind} failed`, fatal: true });
      this.#account(report);
      return { kind: 'failed', error: report.error ?? `${this.driver.kind} failed` };
    }
    if (report.outcome === 'interrupted' && !stopped) {
      // First the interruption (the transcript keeps the text the person saw), then what it cost.
      events.emit('error', { message: 'interrupted', fatal: false, interrupted: true });
      this.#account(report);
      return { kind: 'interrupted' };
    }
    this.#account(report);
    const text = report.outcome === 'end_turn' && report.text ? report.text : segment;
    // The last text the pane streamed, whole: it closes the streamed item (and enters the transcript).
    if (segment) events.emit('text', { text: segment });
    if (report.outcome === 'exited') {
      this.#hooks.exited(report.error ?? 'its program exited');
      return { kind: 'stopped', text };
    }
    return stopped ? { kind: 'stopped', text } : { kind: 'end_turn', text };
  }

  /** The turn's usage and cost as one `usage` event (the CLI reports them per turn). */
  #account(report: TurnReport): void {
    if (report.usage === undefined && report.costUsd === undefined) return;
    if (report.contextTokens !== undefined) this.totals.contextTokens = report.contextTokens;
    this.recordUsage(report.usage ?? emptyUsage(), report.costUsd ?? 0);
  }
}

function summarize(input: unknown): string {
  if (input && typeof input === 'object') {
    for (const value of Object.values(input)) if (typeof value === 'string') return value.replace(/\s+/g, ' ').slice(0, 80);
  }
  return '';
}
