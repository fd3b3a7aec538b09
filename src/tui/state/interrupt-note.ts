// What the console says when an interrupt finds nothing to stop: the agent is between turns, or
// (a team on PostgreSQL) the host that ran it holds no live lease, so nobody can be asked.
import { hostNames } from '../render/host-names.js';
import type { AgentView } from './console-store.js';

export function notInterruptedNote(name: string, agent: AgentView | undefined): string {
  if (agent?.host) return `${name} is in no turn here, and its host ${hostNames([agent.host]).get(agent.host)} is not live to ask`;
  return `${name} is not in a turn`;
}
