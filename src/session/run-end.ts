// When a run with nobody at the screen is over (docs/contract.md#exit-codes): the lead has ended its turn, its
// inbox is empty, and no teammate is working or has work within reach. Or it cannot go on: the
// lead failed, a budget ran out with nobody to extend it, or the watchdog found an agent silent
// (a stall: nobody is there to look into it, so the run fails rather than settle on half a result).
// A team that settles with work someone took and never finished has not succeeded either: a teammate
// lost with its host, say, and nobody left to take its task back up. That run ends `unfinished`
// (exit 1). A task nobody took (the lead planned it for later) is no failure.
import type { Team } from '../agents/lifecycle/team.js';
import type { BudgetStop } from '../runtime/budget/budget.js';
import type { EventHub } from '../runtime/events/events.js';
import type { Task } from '../runtime/store/board/task.js';
import type { TeamStore } from '../runtime/store/team-store.js';
import { formatDuration } from '../agents/lifecycle/protocols.js';

export type RunEnd =
  | { kind: 'settled' }
  | { kind: 'failed' }
  | { kind: 'budget'; stop: BudgetStop }
  /** `message`: "<agent> stalled: no event for <time> while working". */
  | { kind: 'stalled'; agent: string; message: string }
  /** The store can no longer keep the team's state (a full disk, say). */
  | { kind: 'store'; message: string }
  /** The team settled with tasks not done; `message` names them. */
  | { kind: 'unfinished'; message: string };

export function untilDone(team: Team, hub: EventHub, store: Pick<TeamStore, 'failure' | 'onFailure' | 'board'>): Promise<RunEnd> {
  return new Promise((resolve) => {
    let over = false;
    let checking = false;
    let again = false;
    const finish = (end: RunEnd) => {
      if (over) return;
      over = true;
      stopTurns();
      stopEvents();
      stopBudget();
      stopStore();
      resolve(end);
    };
    const check = async () => {
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      do {
        again = false;
        const outcome = team.lead.lastOutcome;
        if (outcome && (outcome.kind === 'failed' || outcome.kind === 'turn_limit') && team.lead.isIdle) return finish({ kind: 'failed' });
        if (outcome && (await team.isSettled())) {
          const open = (await store.board.list()).filter(takenNotDone);
          return finish(open.length ? { kind: 'unfinished', message: notDone(open) } : { kind: 'settled' });
        }
      } while (again && !over);
      checking = false;
    };
    // A hard budget limit with nobody to ask ends the run (exit 3), whatever the agents are doing.
    const stopBudget = team.budget.onExhausted((stop) => finish({ kind: 'budget', stop }));
    // The team's state can no longer be written: the run ends (exit 1), whatever the agents are doing.
    const stopStore = store.onFailure((error) => finish({ kind: 'store', message: error.message }));
    const stopTurns = team.lead.onTurnEnd(() => void check());
    const stopEvents = hub.subscribe((event) => {
      if (event.type === 'warning' && event.stalled) {
        const silent = typeof event.silent_ms === 'number' ? ` no event for ${formatDuration(event.silent_ms)} while working` : '';
        finish({ kind: 'stalled', agent: event.agent, message: `${event.agent} stalled:${silent || ' no events while working'}` });
      } else if (event.type === 'status' || event.type === 'message_delivered') void check();
    });
    if (team.budget.exhausted) finish({ kind: 'budget', stop: team.budget.exhausted });
    if (store.failure) finish({ kind: 'store', message: store.failure.message });
  });
}

/** In progress, in review, or given to someone: taken up, and not done. */
function takenNotDone(task: Task): boolean {
  return task.status !== 'completed' && (task.status !== 'pending' || Boolean(task.owner));
}

/** "2 tasks not done: #4 (pending), #7 (in_progress, alice)", the first few named. */
function notDone(open: Task[]): string {
  const named = open.slice(0, 5).map((task) => `#${task.id} (${task.status}${task.owner ? `, ${task.owner}` : ''})`);
  const more = open.length > named.length ? ` and ${open.length - named.length} more` : '';
  return `the team settled with ${open.length} task${open.length === 1 ? '' : 's'} not done: ${named.join(', ')}${more}; huddle -p --resume goes on with them`;
}
