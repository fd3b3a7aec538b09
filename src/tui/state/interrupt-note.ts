// What the console says when an interrupt finds nothing to stop here: the agent is between turns,
// or another process of the team runs it (a worker on PostgreSQL), which this console cannot reach
// into; a shutdown request travels through the bus and does reach it.
import { hostNames } from '../render/host-names.js';
import type { AgentView } from './console-store.js';

export function notInterruptedNote(name: string, agent: AgentView | undefined): string {
  if (agent?.host) return `${name} runs on ${hostNames([agent.host]).get(agent.host)}: it cannot be interrupted from here; /shutdown ${name} asks it to stop`;
  return `${name} is not in a turn`;
}
