// Intents from the screen to the team: what the person's keys and commands ask for. The
// components never touch the runtime; they call these, and see the effects as events.
import type { Team } from '../agents/team.js';
import { LEAD_NAME } from '../agents/prompts.js';
import type { ConsoleStore, Flash } from './state/console-store.js';
import { patchAgent } from './state/console-store.js';
import { appendItem, itemId } from './state/transcript.js';

export class ConsoleController {
  readonly team: Team;
  readonly store: ConsoleStore;
  readonly #onQuit: () => void;
  readonly #unsubscribeBoard: () => void;

  constructor(team: Team, store: ConsoleStore, onQuit: () => void) {
    this.team = team;
    this.store = store;
    this.#onQuit = onQuit;
    this.#unsubscribeBoard = team.ctx.board.onChange(() => void this.refreshTasks());
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

  /** Forgets an agent's conversation (its log on disk keeps it) and clears its pane. */
  clear(agent: string): void {
    const target = agent === LEAD_NAME ? this.team.lead : this.team.teammates.get(agent);
    if (target && !target.loop.running) target.loop.messages.length = 0;
    this.store.setState((state) => patchAgent(state, agent, () => ({ items: [] })));
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
