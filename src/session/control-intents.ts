// What the control socket may ask of a live session (docs/contract.md#command-line): its agents and their
// statuses, a message to an agent through the bus (exactly once, from "user"), an interrupt, and
// the live-team tools huddle's MCP server forwards for an external teammate. Every face that runs
// a team (the console, headless runs) opens it the same way: openControl().
import { UnknownRecipientError } from '../runtime/store/bus.js';
import { PERSON_SENDER } from '../runtime/vocabulary.js';
import type { ControlRequest, StatusReport } from './control-endpoint.js';
import { ControlServer, ControlUsageError } from './control-server.js';
import { mintPersonKey } from './person-key.js';
import type { TeamSession } from './team-session.js';

/** Starts the session's control socket; a failure is a warning, never the end of the run. */
export async function openControl(session: TeamSession, face: 'console' | 'headless' | 'library' | 'workflow'): Promise<void> {
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
    case 'approve': {
      // `huddle approve`: the needs-you queue from a shell (a workflow's gate, a question in ask mode).
      const waiting = session.waitingForPerson();
      if (request.id === undefined) {
        if (waiting.length !== 1)
          throw new ControlUsageError(
            waiting.length === 0
              ? 'nothing waits for you'
              : `${waiting.length} requests wait; name one: ${waiting.map((r) => `${r.id} (${r.agent}: ${r.summary})`).join(', ')}`,
          );
        return { line: session.answer(waiting[0]!.id, request.deny ? 'deny' : 'approve', request.reason) };
      }
      if (!waiting.some((r) => r.id === request.id)) throw new ControlUsageError(`no request '${request.id}' waits; huddle approve --list shows them`);
      return { line: session.answer(request.id, request.deny ? 'deny' : 'approve', request.reason) };
    }
    case 'waiting':
      return session.waitingForPerson().map(({ id, agent, tool, summary, reason, created_at }) => ({ id, agent, tool, summary, reason, created_at }));
    case 'tool':
      if (typeof request.as !== 'string' || typeof request.tool !== 'string') throw new ControlUsageError('tool needs `as` and `tool`');
      return session.runTeammateTool(request.as, request.tool, request.input ?? {});
    default:
      throw new ControlUsageError(`unknown request '${String((request as { op?: unknown })?.op)}' (status, send, interrupt, approve, waiting, tool)`);
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
