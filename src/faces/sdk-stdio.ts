// `huddle --input-format stream-json --output-format stream-json` (docs/contract.md#agent-sdk-protocol):
// the Claude Agent SDK's protocol, so `query()` with `pathToClaudeCodeExecutable` pointed at huddle
// drives a team. stdin carries user messages (each a turn of the lead, the team with it) and
// control requests (initialize, interrupt, set_permission_mode, set_model, mcp_status); stdout
// carries the stream-json lines (session/stream-json.ts), a result per turn, control responses,
// and huddle's questions as can_use_tool requests when the caller answers them
// (--permission-prompt-tool stdio). A thin face over the session core, like headless.ts.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { CliOptions } from '../session/cli-options.js';
import { openSession } from '../session/open-session.js';
import { openControl } from '../session/control-intents.js';
import { resolveSettings, StartupError } from '../session/settings.js';
import type { RunEnd, TeamSession } from '../session/team-session.js';
import { claudeMcpStatus, StreamJsonView, type ResultSubtype } from '../session/stream-json.js';
import { chooseSessionId, storeSessionId } from '../session/session-id.js';
import { mapPermissionMode } from '../session/claude-flags.js';
import { resolveModelAlias, MODEL_ALIASES } from '../runtime/model/model-aliases.js';
import { scrub } from '../runtime/store/file/event-log.js';
import type { HuddleEvent } from '../runtime/events/events.js';

declare const __HUDDLE_VERSION__: string;
const VERSION = typeof __HUDDLE_VERSION__ === 'string' ? __HUDDLE_VERSION__ : '0.0.0-dev';

type Line = Record<string, unknown>;

/** huddle's tools by Claude Code's names, for the caller's canUseTool. */
const CLAUDE_TOOL: Readonly<Record<string, string>> = { bash: 'Bash', write_file: 'Write', edit_file: 'Edit', read_file: 'Read' };

class ControlError extends Error {}

export async function runStreamInput(options: CliOptions): Promise<number> {
  let secrets: string[] = [];
  const write = (line: Line) => process.stdout.write(`${scrub(JSON.stringify(line), secrets)}\n`);
  let settings: Awaited<ReturnType<typeof resolveSettings>>;
  try {
    settings = await resolveSettings(options, { missingKey: 'refuse' });
  } catch (error) {
    if (error instanceof StartupError) return fail(error.message);
    throw error;
  }
  secrets = settings.secrets;
  const chosen = chooseSessionId(settings.workspace.teamDir, options);
  if ('error' in chosen) return fail(chosen.error);
  const sessionId = chosen.id;
  const view = new StreamJsonView({ stream: true, sessionId, write, partial: options.includePartialMessages ?? false });
  const askCaller = options.permissionPromptTool === 'stdio' && options.permissionModeName !== 'dontAsk';
  let modeName = options.permissionModeName;

  let session: TeamSession | undefined;
  let opening: Promise<TeamSession | undefined> | undefined;
  const open = (): Promise<TeamSession | undefined> =>
    (opening ??= (async () => {
      try {
        const opened = await openSession(settings, {
          fresh: options.fresh,
          resume: options.resume,
          unfinished: 'refuse',
          observe: (event) => {
            view.onEvent(event);
            onEvent(event);
          },
        });
        if (opened === 'quit') return undefined;
        session = opened;
      } catch (error) {
        if (error instanceof StartupError) {
          process.stderr.write(`huddle: ${scrub(error.message, secrets)}\n`);
          return undefined;
        }
        throw error;
      }
      storeSessionId(session.workspace.teamDir, sessionId);
      await openControl(session, 'headless');
      if (askCaller) session.attachPerson();
      const report = await session.resume();
      if (report) process.stderr.write(`huddle: resumed ${report.resumed.map((r) => r.name).join(', ')}\n`);
      session.start();
      return session;
    })());

  // ---- huddle's questions to the caller (can_use_tool) ----
  const pending = new Map<string, (response: Line) => void>();
  const request = (body: Line): Promise<Line> => {
    const id = randomUUID();
    write({ type: 'control_request', request_id: id, request: body });
    return new Promise((resolve) => pending.set(id, resolve));
  };
  function onEvent(event: HuddleEvent): void {
    if (!askCaller || event.type !== 'approval_requested' || !session) return;
    const waiting = session.waitingForPerson().find((r) => r.id === event.id);
    if (!waiting || (waiting.kind && waiting.kind !== 'tool')) return;
    const tool = CLAUDE_TOOL[event.tool] ?? event.tool;
    const input =
      tool === 'Bash' ? { command: event.summary, description: event.reason } : { file_path: event.summary, ...(event.detail ? { detail: event.detail } : {}) };
    void request({
      subtype: 'can_use_tool',
      tool_name: tool,
      input,
      tool_use_id: event.id,
      decision_reason: event.reason,
      permission_suggestions: [],
      ...(event.agent !== 'lead' ? { agent_id: event.agent } : {}),
    }).then((response) => {
      const answer = (response.response ?? {}) as { behavior?: string; message?: string; updatedInput?: unknown };
      // huddle runs the call the agent made: an answer that would change it is a refusal, said to the agent.
      const changed = answer.updatedInput !== undefined && JSON.stringify(answer.updatedInput) !== JSON.stringify(input);
      if (response.subtype === 'success' && answer.behavior === 'allow' && changed)
        session?.answer(event.id, 'deny', 'the caller allowed it only with a changed input, which huddle cannot apply; the call was not run');
      else if (response.subtype === 'success' && answer.behavior === 'allow') session?.answer(event.id, 'approve');
      else session?.answer(event.id, 'deny', answer.message ?? (typeof response.error === 'string' ? response.error : 'denied by the caller'));
    });
  }

  // ---- turns: one user message at a time, the team settled (or interrupted) between them ----
  const queue: string[] = [];
  let running: Promise<void> | undefined;
  let interruptTurn: (() => void) | undefined;
  let lastExit = 0;
  const pump = async (): Promise<void> => {
    while (queue.length) {
      const text = queue.shift()!;
      const live = await open();
      if (!live) {
        lastExit = 2;
        queue.length = 0;
        return;
      }
      const status = live.mcpStatus().map((server) => ({ name: server.name, status: claudeMcpStatus(server.state) }));
      view.init({ ...live.describeLead(), ...(modeName ? { permissionMode: modeName } : {}), version: VERSION, mcpServers: status });
      const started = performance.now();
      const interrupted = new Promise<'interrupted'>((resolve) => (interruptTurn = () => resolve('interrupted')));
      live.prompt(text);
      const end = await Promise.race([live.untilDone(), interrupted]);
      interruptTurn = undefined;
      const { cost_usd: totalCostUsd, ...usage } = live.usageSummary().usage;
      const subtype = subtypeOf(end, live);
      // Each turn's outcome is in its result; the process itself ends well once the input is over (as Claude Code's).
      view.result({
        subtype,
        result: live.leadResult().text,
        durationMs: Math.round(performance.now() - started),
        totalCostUsd,
        usage,
        exitCode: subtype === 'success' ? 0 : end === 'interrupted' ? 130 : 1,
        ...(subtype === 'success' ? {} : { reason: end === 'interrupted' ? 'interrupted' : end.kind }),
      });
    }
  };
  const enqueue = (text: string) => {
    queue.push(text);
    running ??= pump().finally(() => (running = undefined));
  };

  const control = async (body: Line): Promise<Line> => {
    switch (body.subtype) {
      case 'initialize': {
        const system = Array.isArray(body.systemPrompt)
          ? body.systemPrompt.join('\n').trim()
          : typeof body.systemPrompt === 'string'
            ? body.systemPrompt.trim()
            : '';
        const append = typeof body.appendSystemPrompt === 'string' ? body.appendSystemPrompt.trim() : '';
        // An empty system prompt is the SDK's default: the lead keeps huddle's instructions.
        if (system || append) settings.config.leadInstructions = { ...(system ? { replace: system } : {}), ...(append ? { append } : {}) };
        const refused = (['hooks', 'sdkMcpServers', 'agents', 'jsonSchema'] as const).filter(
          (key) => body[key] !== undefined && body[key] !== null && (typeof body[key] !== 'object' || Object.keys(body[key] as object).length > 0),
        );
        if (refused.length)
          throw new ControlError(
            `huddle cannot honour ${refused.join(', ')} from the SDK: its team has its own hooks (settings), MCP servers (.mcp.json) and teammates`,
          );
        await open();
        return {
          commands: [],
          agents: [],
          output_style: 'default',
          available_output_styles: ['default'],
          models: Object.entries(MODEL_ALIASES).map(([alias, id]) => ({ value: alias, displayName: alias, description: id })),
          account: {},
          pid: process.pid,
        };
      }
      case 'interrupt': {
        const live = session;
        // The whole team: the lead and every teammate in a turn.
        if (live) for (const member of live.members()) live.interrupt(member.name);
        interruptTurn?.();
        return {};
      }
      case 'set_permission_mode': {
        const mode = typeof body.mode === 'string' ? mapPermissionMode(body.mode) : undefined;
        if (!mode) throw new ControlError(`huddle has no permission mode '${String(body.mode)}' (default, acceptEdits, bypassPermissions, dontAsk, plan)`);
        (await open())?.setPermissionMode(mode);
        modeName = body.mode as string;
        return { mode: body.mode };
      }
      case 'set_model': {
        const model = typeof body.model === 'string' && body.model !== 'default' ? resolveModelAlias(body.model) : settings.config.model;
        (await open())?.setModel(model);
        return {};
      }
      case 'mcp_status':
        return {
          mcpServers: ((await open())?.mcpStatus() ?? []).map((server) => ({
            name: server.name,
            status: claudeMcpStatus(server.state),
            ...(server.lastError ? { error: server.lastError } : {}),
          })),
        };
      default:
        throw new ControlError(`huddle does not handle the control request '${String(body.subtype)}'`);
    }
  };

  // Stopped from outside (the SDK's close(), Ctrl+C): the team is left resumable, closed properly. A second signal exits now.
  const stop = () => {
    process.once('SIGINT', () => process.exit(130));
    process.once('SIGTERM', () => process.exit(143));
    const live = session;
    if (live) for (const member of live.members()) live.interrupt(member.name);
    void (live ? live.close({ reason: 'stopped', resumable: true, record: { sessionId } }) : Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const raw of lines) {
    if (!raw.trim()) continue;
    let message: Line;
    try {
      message = JSON.parse(raw) as Line;
    } catch {
      process.stderr.write(`huddle: a line on stdin is not JSON (stream-json input takes one JSON message a line): ${raw.slice(0, 80)}\n`);
      continue;
    }
    if (message.type === 'user') {
      const text = userText(message.message);
      if (text === undefined) process.stderr.write('huddle: a user message without text was skipped (huddle takes text content)\n');
      else enqueue(text);
    } else if (message.type === 'control_request') {
      const id = message.request_id;
      control((message.request ?? {}) as Line).then(
        (response) => write({ type: 'control_response', response: { subtype: 'success', request_id: id, response } }),
        (error: Error) => {
          if (!(error instanceof ControlError)) process.stderr.write(`huddle: ${error.message}\n`);
          write({ type: 'control_response', response: { subtype: 'error', request_id: id, error: error.message } });
        },
      );
    } else if (message.type === 'control_response') {
      const response = (message.response ?? {}) as Line;
      const resolve = pending.get(String(response.request_id));
      pending.delete(String(response.request_id));
      resolve?.(response);
    } else if (message.type !== 'keep_alive' && message.type !== 'control_cancel_request') {
      process.stderr.write(`huddle: stream-json input of type '${String(message.type)}' was skipped (user, control_request, control_response)\n`);
    }
  }
  // stdin is over: the turn under way ends, then the team is closed.
  while (running) await running;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  if (session) {
    // The repository rebuilt if the run broke it; the person's own changes it took away, said once.
    for (const line of await session.workspaceAtRunEnd()) process.stderr.write(session.scrub(`huddle: ${line}\n`));
    await session.close({ reason: 'the input ended', record: { sessionId } });
  }
  return lastExit;
}

/** The text of a user message: a string, or its text blocks. */
function userText(message: unknown): string | undefined {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((block): block is { type: 'text'; text: string } => block?.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text);
  return texts.length ? texts.join('\n') : undefined;
}

function subtypeOf(end: RunEnd | 'interrupted', session: TeamSession): ResultSubtype {
  if (end === 'interrupted') return 'error_during_execution';
  if (end.kind === 'settled') return 'success';
  if (end.kind === 'budget') return end.stop.kind === 'usd' ? 'error_max_budget_usd' : 'error_during_execution';
  return session.leadResult().outcome?.kind === 'turn_limit' ? 'error_max_turns' : 'error_during_execution';
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
