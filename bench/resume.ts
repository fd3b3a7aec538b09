// Whole-team resume: a workspace left by a crash with 8 agents (the lead and 7 working teammates)
// and 10,000 logged events in all, generated synthetically. Measured: from Team.open to the resumed
// team running, i.e. every agent has sent its first model request with its rebuilt transcript
// (in process: node's own start-up is what the `version` benchmark measures).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Team } from '../src/agents/lifecycle/team.js';
import { resolveConfig } from '../src/runtime/config.js';
import { openFileStore } from '../src/runtime/store/file/file-store.js';
import { EventHub } from '../src/runtime/events/events.js';
import { InterruptedError, type ModelBackend, type ModelRequest } from '../src/runtime/model/model-client.js';
import { Workspace } from '../src/runtime/workspace/workspace.js';
import { type BenchResult, log, median, result, round, tempDir } from './lib.js';
import { systemText } from '../src/runtime/model/system-prompt.js';

const AGENTS = ['lead', ...Array.from({ length: 7 }, (_, i) => `mate${i + 1}`)];

/** Writes the roster, a board and `events` log events spread over the agents, as a crashed run leaves them. */
function crashedWorkspace(root: string, events: number): void {
  const teamDir = path.join(root, '.team');
  mkdirSync(path.join(teamDir, 'inbox'), { recursive: true });
  const now = new Date().toISOString();
  const members = AGENTS.map((name) => ({ name, role: name === 'lead' ? 'lead' : 'coder', status: 'working', created_at: now, updated_at: now }));
  writeFileSync(path.join(teamDir, 'config.json'), JSON.stringify({ team_name: 'bench', lead: 'lead', members }, null, 2));
  const perAgent = Math.floor(events / AGENTS.length);
  for (const agent of AGENTS) {
    const dir = path.join(teamDir, 'logs', agent);
    mkdirSync(dir, { recursive: true });
    const lines: string[] = [];
    const push = (event: object) => lines.push(JSON.stringify({ ts: now, agent, ...event }));
    push({ type: 'prompt', text: `Work on part of the bench for ${agent}.`, source: agent === 'lead' ? 'user' : 'spawn' });
    // One model call: a few deltas, its text, a tool call and its result (10 events).
    for (let call = 0; lines.length + 10 <= perAgent; call++) {
      for (let d = 0; d < 5; d++) push({ type: 'text_delta', text: `step ${call} part ${d} ` });
      push({ type: 'usage', input_tokens: 1000 + call, output_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
      push({ type: 'text', text: `Step ${call}: reading the next file and checking it.` });
      push({ type: 'tool_call', id: `toolu_${agent}_${call}`, name: 'read_file', input: { path: `src/file-${call}.ts` } });
      push({ type: 'tool_result', id: `toolu_${agent}_${call}`, name: 'read_file', ok: true, content: `export const value${call} = ${call};\n`.repeat(3) });
      push({ type: 'status', status: 'working' });
    }
    // The crash cut the last tool call.
    push({ type: 'usage', input_tokens: 2000, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    push({ type: 'tool_call', id: `toolu_${agent}_cut`, name: 'bash', input: { command: 'npm test' } });
    while (lines.length < perAgent) push({ type: 'status', status: 'working' });
    appendFileSync(path.join(dir, 'session-2020-01-01T00-00-00-000Z.ndjson'), `${lines.join('\n')}\n`);
  }
}

/** A model that never answers: records when each agent first asks, and waits to be interrupted. */
function waitingBackend(onFirstCall: (agent: string) => void): ModelBackend {
  return {
    call(request: ModelRequest, hooks) {
      const agent = /^You are '([^']+)'/m.exec(systemText(request.system))?.[1] ?? '?';
      onFirstCall(agent);
      return new Promise((_, reject) => {
        const abort = () => reject(new InterruptedError());
        if (hooks?.signal?.aborted) abort();
        hooks?.signal?.addEventListener('abort', abort, { once: true });
      });
    },
  };
}

async function resumeOnce(events: number): Promise<{ ms: number; messages: number }> {
  const ws = tempDir('huddle-bench-resume-');
  try {
    crashedWorkspace(ws.dir, events);
    const config = resolveConfig({ cwd: ws.dir }, { ANTHROPIC_API_KEY: 'sk-bench-0123456789', HUDDLE_IDLE_TIMEOUT_MS: '60000' });
    const workspace = new Workspace(ws.dir);
    const hub = new EventHub();
    const store = await openFileStore(workspace, { hub, secrets: [] });
    const asked = new Set<string>();
    let allAsked!: () => void;
    const running = new Promise<void>((resolve) => (allAsked = resolve));
    const started = performance.now();
    const team = await Team.open({
      config,
      workspace,
      hub,
      store,
      backend: waitingBackend((agent) => {
        asked.add(agent);
        if (AGENTS.every((name) => asked.has(name))) allAsked();
      }),
    });
    await team.resumeMembers();
    team.start();
    team.lead.prompt('continue');
    await running;
    const ms = performance.now() - started;
    const messages = [team.lead, ...team.teammates.values()].reduce((sum, agent) => sum + agent.loop.messages.length, 0);
    await team.close('bench over');
    await store.close();
    return { ms, messages };
  } finally {
    ws.cleanup();
  }
}

/** Time from Team.open to a resumed 8-agent team running, for 10,000 logged events. */
export async function benchResume(events = 10_000, runs = 5): Promise<BenchResult[]> {
  const samples: number[] = [];
  let messages = 0;
  for (let i = 0; i < runs; i++) {
    const run = await resumeOnce(events);
    samples.push(run.ms);
    messages = run.messages;
  }
  const value = median(samples);
  log(`resume: ${AGENTS.length} agents, ${events} events: median ${value.toFixed(1)} ms (${samples.map((s) => s.toFixed(0)).join(' ')})`);
  return [
    result({
      name: `resume: ${AGENTS.length} agents, ${events.toLocaleString('en-US')} logged events`,
      value,
      unit: 'ms',
      samples: runs,
      stat: 'median; Team.open until every agent has sent its first model request',
      detail: { samples: samples.map((s) => round(s, 1)), messagesRebuilt: messages },
    }),
  ];
}
