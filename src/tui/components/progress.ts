// What an agent is doing, in a few words with live numbers: the pane header, the tab bar, /grid and
// the status bar read it. Tokens of the response being streamed are estimated from its text (~4
// characters a token) until the model reports the real count at the end of the call.
import { costOf, emptyUsage } from '../../runtime/model/pricing.js';
import { estimateTokens } from '../../runtime/model/context-window.js';
import type { AgentView, ConsoleState } from '../state/console-store.js';
import { formatElapsed } from '../hooks/useClock.js';

export function isBusy(agent: AgentView): boolean {
  return agent.turn !== undefined && agent.status !== 'shutdown' && agent.status !== 'failed';
}

/** Output tokens so far, the streaming estimate included; `estimated` while part of it is a guess. */
export function liveOutputTokens(agent: AgentView): { tokens: number; estimated: boolean } {
  const guess = agent.turn?.streamedChars ? estimateTokens(agent.turn.streamedChars) : 0;
  return { tokens: agent.outputTokens + guess, estimated: guess > 0 };
}

export function liveCost(agent: AgentView, fallbackModel: string): number {
  const guess = agent.turn?.streamedChars ? estimateTokens(agent.turn.streamedChars) : 0;
  return agent.costUsd + (guess ? costOf(agent.model ?? fallbackModel, { ...emptyUsage(), output_tokens: guess }) : 0);
}

/** "thinking · 12 s", "running bash · 40 s", "writing · 3 s", "waiting for you · 1 m 02 s"; after a turn "done in 7 s". */
export function activity(agent: AgentView, now: number): string | undefined {
  const turn = agent.turn;
  if (!turn || !isBusy(agent)) return agent.lastTurnMs !== undefined && agent.status === 'idle' ? `done in ${formatElapsed(agent.lastTurnMs)}` : undefined;
  const doing =
    turn.phase === 'tool'
      ? `running ${agent.activeTool ?? 'a tool'}`
      : turn.phase === 'writing'
        ? 'writing'
        : turn.phase === 'waiting'
          ? (agent.reason ?? 'waiting for you')
          : turn.retry
            ? `retrying ${turn.retry.attempt} of ${turn.retry.of}`
            : 'thinking';
  return `${doing} · ${formatElapsed(now - turn.startedAt)}`;
}

export function anyBusy(state: Pick<ConsoleState, 'agents' | 'order'>): boolean {
  return state.order.some((name) => {
    const agent = state.agents[name];
    return agent !== undefined && isBusy(agent);
  });
}
