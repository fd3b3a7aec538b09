// Checkpoints of the team's workspace before each call of a tool that can write (declared `write` or
// `shell`) and a look at its repository after (runtime/workspace/checkpoints.ts; docs/trust.md); the
// tool pipeline (tool-pipeline.ts) calls them after its permission step: a refused call takes none.
// A call that destroyed `.git` (its HEAD, objects or refs gone, or HEAD pointing at nothing) has it
// rebuilt at once: a `warning` event the person sees (stderr headless, the console's notice) and a
// note to the model with the result.
//
// Only the team's own checkout is checkpointed: a teammate's worktree is its own branch, and the
// sandbox keeps it away from the main checkout. HUDDLE_CHECKPOINTS=off turns checkpoints off.
import { Checkpoints, type Checkpoint } from '../../runtime/workspace/checkpoints.js';
import { lostSince, lostWorkLine, repairGitIfBroken } from '../../runtime/workspace/rewind.js';
import { oneLine } from '../../runtime/tools/registry.js';
import type { Tool, ToolContext } from '../../runtime/tools/types.js';
import type { AgentEmitter } from '../../runtime/events/events.js';

/** The first checkpoint this process took of each workspace: the state when the run began. */
const started = new Map<string, Checkpoint>();
/** A store that cannot be written is said once, not on every call. */
const warned = new Set<string>();

export function checkpointsEnabled(): boolean {
  return process.env.HUDDLE_CHECKPOINTS !== 'off';
}

/** Before a write-capable call in the team's checkout (tool-pipeline.ts): the repository repaired if broken since, then a checkpoint. */
export async function checkpointBefore(teamRoot: string, tool: Tool, input: unknown, context: ToolContext): Promise<void> {
  if (!checkpointsEnabled()) return;
  const store = Checkpoints.for(teamRoot);
  await repair(store, context); // broken by something else since (another process, the person)
  const summary = oneLine(tool.summarize ? tool.summarize(input) : JSON.stringify(input), 120);
  try {
    const checkpoint = await store.take({ agent: context.agent, tool: tool.name, summary });
    if (!started.has(teamRoot)) started.set(teamRoot, checkpoint);
  } catch (error) {
    if (!warned.has(teamRoot)) {
      warned.add(teamRoot);
      context.events.emit('warning', {
        message: `no checkpoint of the workspace before this ${tool.name} call: ${(error as Error).message}`,
        checkpoint: 'failed',
      });
    }
  }
}

/** After that call: the repository rebuilt if the call broke it; the line saying so, for the model. */
export async function repairAfter(teamRoot: string, context: Pick<ToolContext, 'events'>): Promise<string | undefined> {
  return checkpointsEnabled() ? repair(Checkpoints.for(teamRoot), context) : undefined;
}

/**
 * For an external agent, whose CLI runs its own tools: a checkpoint of its workspace where huddle
 * sees a call coming (before each turn, and when the CLI asks permission for a tool). Never throws.
 */
export async function checkpointForExternal(root: string, events: AgentEmitter, tool: string, summary: string): Promise<void> {
  if (!checkpointsEnabled()) return;
  const store = Checkpoints.for(root);
  await repair(store, { events });
  try {
    const checkpoint = await store.take({ agent: events.agent, tool, summary: oneLine(summary, 120) });
    if (!started.has(root)) started.set(root, checkpoint);
  } catch (error) {
    if (!warned.has(root)) {
      warned.add(root);
      events.emit('warning', { message: `no checkpoint of the workspace before ${events.agent}'s ${tool}: ${(error as Error).message}`, checkpoint: 'failed' });
    }
  }
}

/** After an external agent's tool call or turn: its workspace's repository rebuilt if the call broke it. */
export async function repairForExternal(root: string, events: AgentEmitter): Promise<void> {
  if (checkpointsEnabled()) await repair(Checkpoints.for(root), { events });
}

async function repair(store: Checkpoints, context: Pick<ToolContext, 'events'>): Promise<string | undefined> {
  try {
    const line = await repairGitIfBroken(store);
    if (line) context.events.emit('warning', { message: line, repaired: 'git', workspace: store.root });
    return line;
  } catch (error) {
    context.events.emit('warning', {
      message: `the repository is broken and huddle could not rebuild it: ${(error as Error).message}; huddle rewind lists the checkpoints`,
      repaired: 'failed',
    });
    return undefined;
  }
}

/**
 * At the end of a run: the repository rebuilt if it is broken, and one line for each thing the
 * person should know (the rebuild; their own changes from before the run that it reverted or
 * deleted, with the `huddle rewind` that brings them back). Those changes are not put back on their
 * own: the run may have been asked to discard them, and later work of the run may sit on top;
 * a rewind is one command and can itself be undone.
 */
export async function checkpointsAtRunEnd(teamRoot: string): Promise<string[]> {
  const start = started.get(teamRoot);
  if (!checkpointsEnabled() || !start) return [];
  const store = Checkpoints.for(teamRoot);
  const lines: string[] = [];
  try {
    const repaired = await repairGitIfBroken(store);
    if (repaired) lines.push(repaired);
    const end = await store.take({ agent: 'huddle', tool: 'run end', summary: 'the workspace when the run ended' });
    const line = lostWorkLine(await lostSince(store, start, end), start.id);
    if (line) lines.push(line);
  } catch (error) {
    lines.push(`could not check the workspace against its checkpoints: ${(error as Error).message}`);
  }
  // The run's last checkpoint is taken: its long-lived git ends now, and is waited for (none left as a zombie).
  await store.endHelpers();
  return lines;
}
