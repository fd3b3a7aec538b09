// Teammates on other hosts (docs/contract.md#command-line, `huddle worker`): the lead's spawn goes to a worker
// with a free slot when the team's store has hosts (PostgreSQL) and one is connected; the worker
// runs it as its own in-process teammate, in its own checkout. Everything between them goes
// through the store: the roster (status), the bus (messages, shutdown and plan protocols), the
// board, and the event record (the lead's console shows the remote panes from it).
import type { Placement, PlacementSpec } from '../../runtime/store/hosts.js';
import type { Task } from '../../runtime/store/board.js';
import type { PermissionMode } from '../../runtime/permissions/permission-mode.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import type { PermissionGate } from '../../runtime/permissions/permission-gate.js';
import type { TeamStore } from '../../runtime/store/team-store.js';
import { loadRoles } from './roles.js';
import { fill } from '../prompts/templates.js';
import type { TeamContext } from '../team-context.js';
import type { Teammate, TeammateStart } from './teammate.js';

/** What placing and hosting teammates needs of the team (implemented by Team). */
export interface PlacementTeam {
  readonly ctx: TeamContext;
  readonly store: TeamStore;
  readonly permissions: PermissionGate;
  startTeammate(spec: TeammateStart, prompt: string): Teammate;
  liveTeammates(): Teammate[];
}

/**
 * Hands a new teammate to a worker with a free slot: the slot is reserved, the roster gets the
 * member (on that host), then the worker is told. Undefined when no worker has a slot free: the
 * spawn runs here.
 *
 * The reservation can be gone by the time the worker is told (a sweep cancelled it as stale, or
 * the worker lapsed and was swept in between): no worker will ever take it, so the teammate runs
 * in this process instead, as the worker would have run it (no worktree of its own). The roster
 * already holds it as `working`, so it moves here rather than being added again.
 */
export async function placeOnWorker(team: PlacementTeam, spec: PlacementSpec): Promise<string | undefined> {
  const hosts = team.store.hosts;
  if (!hosts) return undefined;
  const placement = await hosts.reserve(spec);
  if (!placement) return undefined;
  try {
    await team.ctx.roster.add({
      name: spec.name,
      role: spec.role,
      model: spec.model,
      status: 'working',
      host: placement.host,
      ...(spec.planModeRequired ? { plan_mode: 'pending' } : {}),
    });
  } catch (error) {
    // A reservation that cannot be cancelled lapses with its lease.
    await hosts.cancel(placement.id).catch(() => undefined);
    throw error;
  }
  const what = `${spec.name} (${spec.role}, ${spec.model}${spec.planModeRequired ? ', plan mode' : ''})`;
  if (await hosts.dispatch(placement.id)) return `spawned ${what} on worker ${placement.hostLabel}`;
  await team.ctx.roster.update(spec.name, { host: hosts.self });
  const { roles } = loadRoles(team.ctx.workspace.teamDir);
  team.startTeammate(
    { name: spec.name, role: spec.role, model: spec.model, roleDef: roles.get(spec.role), worktree: undefined, planModeRequired: spec.planModeRequired },
    spec.prompt,
  );
  return `spawned ${what} in the lead's process: worker ${placement.hostLabel} let its slot go before it could take it`;
}

/**
 * A worker runs one placed teammate until it finishes, or until `stop` aborts (the lead recalled
 * it, the worker stops, or its lease lapsed). A plan-mode teammate gets its full tools when the
 * lead's approval reaches its inbox (the lead's process cannot reach this loop).
 */
export async function hostPlacement(team: PlacementTeam, placement: Placement, stop: AbortSignal): Promise<void> {
  const { roles } = loadRoles(team.ctx.workspace.teamDir);
  const roleDef = roles.get(placement.role);
  team.permissions.setMode(placement.name, placement.permissionMode as PermissionMode);
  const teammate = team.startTeammate(
    { name: placement.name, role: placement.role, model: placement.model, roleDef, worktree: undefined, planModeRequired: placement.planModeRequired },
    placement.prompt,
  );
  const onStop = () => teammate.stopNow(stopReason(stop.reason));
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  const off = team.ctx.hub.subscribe((event) => {
    if (event.type !== 'message_delivered' || event.agent !== placement.name) return;
    if (event.messages?.some((message) => message.type === 'plan_approval_response' && message.approve === true)) teammate.approvePlan();
  });
  try {
    await teammate.done;
  } finally {
    off();
    stop.removeEventListener('abort', onStop);
  }
}

/**
 * A worker that stops on purpose: its teammates stop now, their unfinished tasks go back on the
 * board, and the lead is told; then its lease can end.
 */
export async function leaveWorker(team: PlacementTeam, reason: string): Promise<void> {
  const live = team.liveTeammates();
  for (const teammate of live) teammate.stopNow(reason);
  await Promise.all(live.map((teammate) => teammate.done));
  for (const teammate of live) {
    const released: Task[] = await team.ctx.board.release(teammate.name, 'huddle').catch(() => []);
    const tasks = released.map((t) => `#${t.id}`).join(', ');
    const content = fill('message-teammate-stopped', { teammate: teammate.name, reason, tasks, several: released.length > 1 });
    // Telling the lead is best effort: it may be gone; the stop is in the roster and the log.
    await team.ctx.bus.send({ type: 'message', from: 'huddle', to: LEAD_NAME, content }).catch(() => undefined);
  }
}

function stopReason(reason: unknown): string {
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'stopped by its worker';
}
