// Resume (docs/contract.md#command-line, docs/contract.md#injected-turns): the lead and every teammate that was not shut down come back
// with the conversation rebuilt from their logs (transcript-replay.ts, by the live loop's own rule)
// and one user turn saying so. Each inbox cursor is first re-acked to the last delivery the log
// recorded, so nothing is delivered twice. Teammates that cannot come back (failed, or their role
// file no longer loads) release their tasks to the board. Run before the team starts; the lead's
// resume turn waits for its next input (the prompt of the resumed run).
import type { EventStore, LoggedEvent } from '../../runtime/store/event-store.js';
import type { Member } from '../../runtime/store/roster.js';
import type { PermissionGate } from '../../runtime/permissions/permission-gate.js';
import { teammateMode } from '../../runtime/permissions/permission-mode.js';
import { contextWindowFor } from '../../runtime/model/context-window.js';
import { formatInbox } from '../../runtime/inbox.js';
import { ensureWorktree } from '../../runtime/workspace/worktree.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import type { Agent } from '../loop/agent.js';
import type { Lead } from './lead.js';
import { isReviewerRole } from '../tools/review-tools.js';
import { loadRoles, type RoleDefinition } from './roles.js';
import type { TeamContext } from '../team-context.js';
import type { Teammate, TeammateResume, TeammateStart } from './teammate.js';
import { replayEvents, resumeTurn } from '../loop/transcript-replay.js';
import { isAgentKind } from '../external/launch.js';

/** A rebuilt transcript above this share of the context window is compacted rather than replayed whole. */
const RESUME_COMPACT_FRACTION = 0.5;

export interface ResumeReport {
  resumed: Array<{ name: string; events: number; interrupted: number; idle: boolean }>;
  released: Array<{ name: string; tasks: number; reason: string }>;
}

/** What a resume needs of the team. */
export interface ResumeHost {
  readonly ctx: TeamContext;
  readonly eventLog: EventStore;
  readonly lead: Lead;
  readonly permissions: PermissionGate;
  hasTeammate(name: string): boolean;
  /** Starts a teammate as on spawn, but held until its transcript is in place (`teammate.start()`). */
  startTeammate(start: TeammateStart, prompt: string, resume: TeammateResume): Teammate;
  /** Loads the external agents' code: before startTeammate for an external agent. */
  loadExternal(): Promise<void>;
  forgetTeammate(name: string): void;
  /** True for a member another live host runs: it is not brought back here. */
  runsElsewhere?(name: string): boolean;
  /** A shutdown request sent before the restart and not yet answered is open again. */
  reopenShutdown(teammate: string, requestId: string): void;
}

export async function resumeTeam(team: ResumeHost): Promise<ResumeReport> {
  const { ctx } = team;
  const report: ResumeReport = { resumed: [], released: [] };
  const { roles, errors } = loadRoles(ctx.workspace.teamDir);
  const logs = new Map<string, LoggedEvent[]>();
  for (const agent of await team.eventLog.agents()) logs.set(agent, await team.eventLog.read(agent));
  await reconcileTaskLog(ctx, logs);
  const lead = await restore(team, team.lead, logs, 'lead');
  appendTurn(team.lead, lead.turn);
  report.resumed.push({ name: LEAD_NAME, events: lead.events, interrupted: lead.interrupted, idle: true });
  const answered = new Set((await ctx.bus.history(LEAD_NAME)).flatMap((m) => (m.type === 'shutdown_response' && m.request_id ? [m.request_id] : [])));
  const members = ctx.roster
    .members()
    .filter((m) => m.name !== LEAD_NAME && m.status !== 'shutdown' && !team.hasTeammate(m.name) && !team.runsElsewhere?.(m.name));
  const comeBack: typeof members = [];
  // Those that cannot come back first: the board is settled before anyone resumed looks at it.
  for (const member of members) {
    const roleBroken = !roles.has(member.role) && errors.some((e) => e.includes(`${member.role}.md`));
    if (member.status !== 'failed' && !roleBroken) {
      comeBack.push(member);
      continue;
    }
    const why = member.status === 'failed' ? `failed earlier${member.error ? ` (${member.error})` : ''}` : `role '${member.role}' cannot be loaded`;
    report.released.push(await release(ctx, member.name, why));
  }
  for (const member of comeBack) {
    try {
      report.resumed.push(await resumeTeammate(team, member, roles.get(member.role), logs, answered));
    } catch (error) {
      // It cannot come back (its worktree cannot be made, say): its tasks go back to the board.
      team.forgetTeammate(member.name);
      report.released.push(await release(ctx, member.name, error instanceof Error ? error.message : String(error)));
    }
  }
  return report;
}

async function release(ctx: TeamContext, name: string, why: string): Promise<ResumeReport['released'][number]> {
  const tasks = await ctx.board.release(name);
  await ctx.roster.setStatus(name, 'shutdown', { reason: `not resumed: ${why}` });
  return { name, tasks: tasks.length, reason: why };
}

/** One teammate back as it was: role, model, tools and worktree as on spawn, with its rebuilt transcript. */
async function resumeTeammate(
  team: ResumeHost,
  member: Member,
  role: RoleDefinition | undefined,
  logs: Map<string, LoggedEvent[]>,
  answered: Set<string>,
): Promise<ResumeReport['resumed'][number]> {
  const { ctx } = team;
  const permission = teammateMode({ requested: undefined, role: role?.permission_mode, run: team.permissions.runMode(), byLead: true });
  team.permissions.setMode(member.name, permission.mode);
  const worktree = member.worktree ? await ensureWorktree(ctx.workspace.root, member.name) : undefined;
  const idle = member.status === 'idle';
  // A plan-mode teammate whose plan was never approved resumes read-only, whatever it was doing when the old process
  // stopped (exploring, or stopped before its first turn); a plan still waiting was answered by nobody (the request
  // lived in that process): it asks again. An approved plan resumes with its full tools.
  const planUndecided = member.plan_mode === 'pending' || (member.status === 'waiting' && member.status_reason === 'plan approval');
  const agent = isAgentKind(member.agent) ? member.agent : undefined;
  const start: TeammateStart = {
    name: member.name,
    role: member.role,
    model: member.model ?? (agent && agent !== 'claude-code' ? agent : (role?.model ?? ctx.config.model)),
    roleDef: role,
    worktree,
    planModeRequired: planUndecided,
    // An external agent continues its CLI's own session (its conversation is there, not in huddle's transcript).
    ...(agent ? { agent, agentModel: member.model, agentSession: typeof member.agent_session === 'string' ? member.agent_session : undefined } : {}),
  };
  if (agent) await team.loadExternal();
  // A review it had taken goes back to the board: stopped after taking it and before its turn was
  // recorded, it would come back without it and nobody else could take it (board/rules.ts mayReview);
  // an idle reviewer takes it again, this one or another, and reviews it whole.
  if (isReviewerRole(member.role)) await ctx.board.release(member.name);
  const teammate = team.startTeammate(start, '', { idle });
  const restored = await restore(team, teammate, logs, member.role);
  if (idle) appendTurn(teammate, restored.turn);
  else teammate.prompt = restored.turn;
  for (const message of await ctx.bus.history(member.name)) {
    if (message.type === 'shutdown_request' && message.request_id && !answered.has(message.request_id)) team.reopenShutdown(member.name, message.request_id);
  }
  teammate.start();
  return { name: member.name, events: restored.events, interrupted: restored.interrupted, idle };
}

/** Puts an agent's rebuilt transcript in place (compacted when large) and says what its resume turn is. */
async function restore(
  team: ResumeHost,
  agent: Agent,
  logs: Map<string, LoggedEvent[]>,
  role: string,
): Promise<{ turn: string; events: number; interrupted: number }> {
  const { ctx } = team;
  const identity = { name: agent.name, role, team: ctx.teamName };
  // Into the agent's own transcript: the loop continues from exactly what the log rebuilds.
  const replayed = replayEvents(logs.get(agent.name) ?? [], identity, agent.loop.transcript);
  // The delivery was logged before the ack: make the ack true, whichever happened last.
  if (replayed.deliveredOffset !== undefined) await ctx.bus.ack(agent.name, replayed.deliveredOffset);
  if (replayed.tokens > RESUME_COMPACT_FRACTION * contextWindowFor(agent.loop.model)) {
    // Too large to replay whole: the summary replaces it (on failure the loop's own compaction retries).
    await agent.compact().done.catch(() => undefined);
  }
  const tasks = (await ctx.board.list()).filter((task) => task.owner === agent.name && task.status !== 'completed');
  const inbox = replayed.undelivered.length ? formatInbox(replayed.undelivered) : undefined;
  const turn = resumeTurn(identity, tasks, { interrupted: replayed.interruptedTools.length, inbox });
  return { turn, events: replayed.events, interrupted: replayed.interruptedTools.length };
}

/** A user turn added without a model call: a `prompt` event, which the transcript adds (and a later resume replays). */
function appendTurn(agent: Agent, text: string): void {
  agent.events.emit('prompt', { text, source: 'system' });
}

/**
 * A kill between a task file's write and its event leaves the log behind the board: the task's
 * state as it is now is logged, so the logs agree with the board again.
 */
async function reconcileTaskLog(ctx: TeamContext, logs: Map<string, LoggedEvent[]>): Promise<void> {
  const logged = [...logs.values()]
    .flat()
    .filter((e) => e.type === 'task' && e.task && typeof e.task === 'object')
    .sort((a, b) => String(a.ts).localeCompare(String(b.ts)));
  const last = new Map<number, { status?: unknown; owner?: unknown }>();
  for (const event of logged) {
    const task = event.task as { id?: unknown; status?: unknown; owner?: unknown };
    last.set(Number(task.id), task);
  }
  for (const task of await ctx.board.list()) {
    const seen = last.get(task.id);
    if (seen?.status === task.status && (seen.owner ?? null) === (task.owner ?? null)) continue;
    ctx.hub.emit(LEAD_NAME, 'task', { action: 'reconciled', task });
  }
}
