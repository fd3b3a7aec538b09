// /restart NAME: a fresh loop for an agent that keeps what matters — its workspace (worktree),
// its tasks (the board is untouched) and a summary of its transcript. The new loop's first user
// turn is the identity block (docs/contract.md#injected-turns) with the tasks it owns, then the summary. The
// restart is logged as a `context_reset`, so a resume starts from there too.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ModelBackend } from '../../runtime/model/model-client.js';
import type { Agent } from '../loop/agent.js';
import type { AgentLoop } from '../loop/agent-loop.js';
import { renderTranscript, summaryPrompt } from '../loop/compaction.js';
import { restartedTurn } from '../prompts/identity-block.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import type { Lead } from './lead.js';
import type { TeamContext } from '../team-context.js';
import type { Teammate, TeammateSpec } from './teammate.js';

/** What a restart needs of the team. */
export interface RestartHost {
  readonly ctx: TeamContext;
  readonly lead: Lead;
  teammate(name: string): Teammate | undefined;
  teammateNames(): string[];
  /** Puts the restarted teammate where the old one was. */
  replaceTeammate(name: string, teammate: Teammate): void;
}

/** How much of the old transcript the summary call sees (characters). */
const TRANSCRIPT_BUDGET = 120_000;
/** The fallback summary: this many of the last assistant texts. */
const FALLBACK_TEXTS = 3;

export interface RestartResult {
  name: string;
  /** How the summary was made. */
  summary: 'model' | 'last-texts' | 'empty';
  message: string;
}

/**
 * A summary of `messages` for the new loop: written by the model like a compaction's, or on
 * failure the last assistant texts (never nothing when there was something).
 */
export async function summariseForRestart(
  loop: Pick<AgentLoop, 'model' | 'system' | 'totals' | 'recordUsage'>,
  events: Agent['events'],
  messages: MessageParam[],
  backend: ModelBackend,
  maxTokens: number,
  signal?: AbortSignal,
): Promise<{ text: string; kind: RestartResult['summary']; error?: string }> {
  if (messages.length === 0) return { text: '', kind: 'empty' };
  try {
    const transcript = renderTranscript(messages, TRANSCRIPT_BUDGET);
    const focus = 'you are being restarted with a fresh context; say where the work stands and what to do next';
    const result = await backend.call(
      {
        model: loop.model,
        system: loop.system,
        messages: [{ role: 'user', content: summaryPrompt(transcript, 'manual', focus) }],
        tools: [],
        maxTokens,
        cache: 'prefix',
      },
      {
        ...(signal ? { signal } : {}),
        onPartialUsage: (partial) => loop.recordUsage(partial.usage, partial.costUsd, { purpose: 'compaction', restart: true, partial: partial.outcome }),
      },
    );
    // The summary costs like any call: in the agent's totals and its usage events (as a compaction's).
    loop.recordUsage(result.usage, result.costUsd, { purpose: 'compaction', restart: true });
    const text = result.message.content
      .flatMap((block) => (block.type === 'text' ? [block.text] : []))
      .join('')
      .trim();
    if (text) return { text, kind: 'model' };
    return { ...lastTexts(messages), error: 'the model returned an empty summary' };
  } catch (error) {
    return { ...lastTexts(messages), error: error instanceof Error ? error.message : String(error) };
  }
}

function lastTexts(messages: MessageParam[]): { text: string; kind: RestartResult['summary'] } {
  const texts = messages
    .filter((message) => message.role === 'assistant')
    .flatMap((message) =>
      typeof message.content === 'string'
        ? [message.content]
        : message.content.flatMap((block) => (block.type === 'text' && block.text.trim() ? [block.text.trim()] : [])),
    )
    .slice(-FALLBACK_TEXTS);
  if (texts.length === 0) return { text: '', kind: 'empty' };
  return { text: `(no summary could be written; your last words were:)\n${texts.join('\n---\n')}`, kind: 'last-texts' };
}

/** The first user turn of the restarted loop. */
async function restartTurn(team: RestartHost, name: string, role: string, summary: string): Promise<string> {
  const owned = (await team.ctx.board.list().catch(() => [])).filter((task) => task.owner === name && task.status !== 'completed');
  return restartedTurn({ name, role, team: team.ctx.teamName }, owned, summary);
}

/**
 * Restarts `name`. A teammate's loop is stopped (stopNow) and a new Teammate with the same name,
 * role, model, tools and worktree starts from the restart turn. The lead's transcript is replaced
 * by the restart turn (it carries on with its next prompt or message).
 */
export async function restartAgent(team: RestartHost, name: string): Promise<RestartResult> {
  const { backend, config } = team.ctx;
  // The console shows `↻ restarting NAME…` from here until the `done` warning below (docs/console.md#approvals).
  if (name === LEAD_NAME || team.teammate(name)) team.ctx.hub.emit(name, 'warning', { message: `restarting ${name}…`, restart: 'start' });
  if (name === LEAD_NAME) {
    const lead = team.lead;
    if (lead.loop.running) {
      // The lead's turn ends at the interrupt; wait for it so the transcript is still.
      const ended = new Promise<void>((resolve) => {
        const off = lead.onTurnEnd(() => {
          off();
          resolve();
        });
      });
      lead.interrupt();
      await ended;
    }
    const old = lead.loop.messages.slice();
    const summary = await summariseForRestart(lead.loop, lead.events, old, backend, config.maxTokens);
    const text = await restartTurn(team, name, 'lead', summary.text);
    const before = lead.loop.totals.contextTokens;
    lead.loop.totals.contextTokens = Math.ceil(text.length / 4);
    // The transcript becomes the restart turn alone (it carries on with its next prompt or message).
    logReset(lead.events, summary.text, before, lead.loop.totals.contextTokens, text);
    // It runs again on the person's next prompt (or a message): its status says so, no longer failed.
    await lead.restarted();
    const message = describe(name, summary, 'it waits for your next prompt');
    lead.events.emit('warning', { message, restart: 'done', summary: summary.kind });
    return { name, summary: summary.kind, message };
  }

  const old = team.teammate(name);
  if (!old) {
    const names = team.teammateNames();
    throw new Error(`no teammate named '${name}' to restart; teammates: ${names.length ? names.join(', ') : 'none'}`);
  }
  if (!old.finished) {
    old.stopNow('restarting');
    await old.done;
  }
  const summary = await summariseForRestart(old.loop, old.events, old.loop.messages, backend, config.maxTokens);
  const prompt = await restartTurn(team, name, old.role, summary.text);
  const spec: TeammateSpec = {
    ...old.spec,
    model: old.loop.model,
    // The tools it had (a plan approved before the restart stays approved).
    tools: old.loop.tools,
    prompt,
    planModeRequired: old.planPending,
  };
  // A restart is a fresh start from the summary, never a replay of the old transcript.
  delete spec.resume;
  const fresh = old.respawn(spec);
  // Its spend carries over (/cost, budgets); its context starts small.
  Object.assign(fresh.loop.totals, old.loop.totals, { contextTokens: 0 });
  // Its transcript starts empty; the restart turn follows as its first prompt.
  logReset(fresh.events, summary.text, old.loop.totals.contextTokens, Math.ceil(prompt.length / 4));
  team.replaceTeammate(name, fresh);
  fresh.start();
  const message = describe(name, summary, 'it works again from its summary');
  fresh.events.emit('warning', { message, restart: 'done', summary: summary.kind });
  return { name, summary: summary.kind, message };
}

/** The transcript starts over: from `firstTurn`, or empty (a teammate's first turn follows as its prompt). */
function logReset(events: Agent['events'], summary: string, beforeTokens: number, afterTokens: number, firstTurn?: string): void {
  events.emit('context_reset', {
    reason: 'restart',
    ...(firstTurn !== undefined ? { first_turn: firstTurn } : {}),
    summary,
    before_tokens: beforeTokens,
    after_tokens: afterTokens,
  });
}

function describe(name: string, summary: { kind: RestartResult['summary']; error?: string }, next: string): string {
  const how =
    summary.kind === 'model'
      ? 'with a summary of its transcript'
      : summary.kind === 'last-texts'
        ? `with its last messages (the summary failed: ${summary.error ?? 'unknown error'})`
        : 'with no earlier conversation';
  return `restarted ${name} ${how}; its tasks and workspace are kept; ${next}`;
}
