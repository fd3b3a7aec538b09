// What the control socket may ask of a live session (docs/contract.md#command-line): its agents and their
// statuses, a message to an agent through the bus (exactly once, from "user"), an interrupt, and
// the live-team tools huddle's MCP server forwards for an external teammate. Every face that runs
// a team (the console, headless runs) opens it the same way: openControl().
import { UnknownRecipientError } from '../runtime/store/bus.js';
import { PERSON_SENDER } from '../runtime/vocabulary.js';
import type { ControlRequest, StatusReport, WaitingLine } from './control-endpoint.js';
import { ControlServer, ControlUsageError } from './control-server.js';
import { mintPersonKey } from './person-key.js';
import type { TeamSession } from './team-session.js';

/** Starts the session's control socket; a failure is a warning, never the end of the run. */
export async function openControl(session: TeamSession, face: 'console' | 'headless' | 'library' | 'workflow' | 'best-of'): Promise<void> {
  try {
    // What `huddle mcp --as NAME` over the store must show: the person's, never an agent's (person-key.ts).
    mintPersonKey(session.workspace.teamDir);
  } catch (error) {
    session.hub.emit('huddle', 'warning', {
      message: `the person's key could not be written (${error instanceof Error ? error.message : String(error)}); huddle mcp --as NAME cannot join this team from a shell`,
    });
  }
  try {
    const server = await ControlServer.start(session.workspace.teamDir, face, (request) => handleControl(session, face, request));
    session.closeWith(() => server.close());
    // Headless, `huddle approve` through this socket is how the person answers a plan that waits for them.
    if (face === 'headless') {
      const detach = session.attachPlanAnswerer();
      session.closeWith(async () => detach());
    }
  } catch (error) {
    session.hub.emit('huddle', 'warning', {
      message: `the control socket could not be opened (${error instanceof Error ? error.message : String(error)}); huddle status/send/interrupt cannot reach this run`,
    });
  }
}

export async function handleControl(session: TeamSession, face: string, request: ControlRequest): Promise<unknown> {
  switch (request?.op) {
    case 'status':
      return statusReport(session, face);
    case 'send': {
      if (typeof request.to !== 'string' || typeof request.text !== 'string' || !request.text.trim()) {
        throw new ControlUsageError('send needs an agent name and a non-empty text');
      }
      try {
        const message = await session.send(request.to, request.text, PERSON_SENDER);
        return { id: message.id, to: message.to };
      } catch (error) {
        if (error instanceof UnknownRecipientError) throw new ControlUsageError(error.message);
        throw error;
      }
    }
    case 'interrupt': {
      const name = request.agent;
      // An agent here, or one another process of the team runs (it is on the roster).
      const known = typeof name === 'string' && (session.agentState(name) !== undefined || session.members().some((m) => m.name === name));
      if (!known)
        throw new ControlUsageError(
          `no agent named '${String(name)}'; agents: ${session
            .members()
            .map((m) => m.name)
            .join(', ')}`,
        );
      return { interrupted: session.interrupt(name) };
    }
    case 'tool':
      if (typeof request.as !== 'string' || typeof request.tool !== 'string') throw new ControlUsageError('tool needs `as` and `tool`');
      return session.runTeammateTool(request.as, request.tool, request.input ?? {});
    case 'approvals':
      return session.waitingForPerson().map((r): WaitingLine => ({
        id: r.id,
        agent: r.agent,
        kind: r.kind ?? 'tool',
        tool: r.tool,
        summary: r.summary,
        detail: r.detail,
        created_at: r.created_at,
      }));
    case 'approve':
      // The needs-you queue from a shell: a plan, a workflow's gate, a question in ask mode.
      return answerWaiting(session, request);
    default:
      throw new ControlUsageError(`unknown request '${String((request as { op?: unknown })?.op)}' (status, send, interrupt, tool, approvals, approve)`);
  }
}

function statusReport(session: TeamSession, face: string): StatusReport {
  return {
    pid: process.pid,
    face,
    workspace: session.workspace.root,
    team: session.teamName,
    agents: session.members().map((member) => {
      const state = session.agentState(member.name);
      return {
        name: member.name,
        role: member.role,
        status: member.status,
        reason: member.status_reason ?? member.error,
        agent: typeof member.agent === 'string' ? member.agent : 'huddle',
        model: member.model,
        task: member.task,
        cost_usd: state?.costUsd ?? 0,
        context_tokens: state?.contextTokens ?? 0,
        in_turn: state?.inTurn ?? false,
      };
    }),
  };
}

/** `huddle approve [ID] [--deny] [--message TEXT] [--edit FILE]`: one answer, or one line saying why not. */
function answerWaiting(session: TeamSession, request: Extract<ControlRequest, { op: 'approve' }>): { answer: string; id: string } {
  const waiting = session.waitingForPerson();
  const ids = waiting.map((r) => r.id).join(', ');
  let id = request.id;
  if (id === undefined) {
    if (waiting.length !== 1)
      throw new ControlUsageError(waiting.length ? `${waiting.length} requests wait (${ids}); name one: huddle approve ID` : 'nothing waits for you');
    id = waiting[0]!.id;
  }
  const target = waiting.find((r) => r.id === id);
  if (!target) throw new ControlUsageError(`no request '${id}' waits for you; ${waiting.length ? `waiting: ${ids}` : 'nothing waits'}`);
  if (request.edited !== undefined && (target.kind !== 'plan' || request.deny))
    throw new ControlUsageError(
      request.deny ? '--edit approves with your edits; it does not go with --deny' : `--edit is for a plan; ${id} is a ${target.kind ?? 'tool'} request`,
    );
  if (request.edited !== undefined && !request.edited.trim()) throw new ControlUsageError('the edited plan is empty');
  const message = typeof request.message === 'string' && request.message.trim() ? request.message.trim() : undefined;
  return { id, answer: session.answer(id, request.deny ? 'deny' : 'approve', message, request.edited) };
}
