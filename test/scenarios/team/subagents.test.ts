// Subagents (docs/contract.md#subagents): a headless lead calls `explore` with three tasks; the fake
// Messages API holds each helper's first request until all three have arrived (so they can only
// finish if they run in parallel), one helper tries write_file and bash, and the lead's next request
// carries the three summaries. The stream-json lines, the run record and the spend say who did what.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentLoop } from '../../../src/agents/loop/agent-loop.js';
import { Transcript } from '../../../src/agents/loop/transcript.js';
import { subagentTool } from '../../../src/agents/tools/subagent-tool.js';
import { agentEmitter, EventHub, type EventRecord } from '../../../src/runtime/events/events.js';
import { ModelClient } from '../../../src/runtime/model/model-client.js';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { Workspace as Root } from '../../../src/runtime/workspace/workspace.js';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse, type RecordedRequest } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

type Line = Record<string, any>;

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-subagents-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

const HELPER = /^lead\/explore-(\d)$/;
const assistantTurns = (request: RecordedRequest) => (request.body?.messages ?? []).filter((m: { role: string }) => m.role === 'assistant').length;

/** The lead explores with three helpers, then answers; helper 2 tries to write and run a command. */
function script(): { leadRequests: RecordedRequest[] } {
  const leadRequests: RecordedRequest[] = [];
  const arrived = new Set<string>();
  let allArrived: () => void = () => {};
  const allThree = new Promise<void>((resolve) => (allArrived = resolve));
  fake.respond(async (request) => {
    if (request.path !== '/v1/messages') return undefined;
    if (request.agent === 'lead') {
      leadRequests.push(request);
      if (assistantTurns(request) === 0)
        return reply(
          text('Looking around.'),
          toolUse(
            'explore',
            {
              tasks: [
                { prompt: 'find the readme', description: 'readme' },
                { prompt: 'write a file and run a command', description: 'tries to write' },
                { prompt: 'list the sources', description: 'sources' },
              ],
            },
            'toolu_explore',
          ),
        );
      return replyText('All three reported.');
    }
    const helper = HELPER.exec(request.agent ?? '')?.[1];
    if (!helper) return undefined;
    if (assistantTurns(request) === 0) {
      arrived.add(request.agent!);
      if (arrived.size === 3) allArrived();
      // Held until every helper has asked: sequential helpers would never get here.
      await allThree;
      if (helper === '2') return reply(toolUse('write_file', { path: 'evil.txt', content: 'x' }), toolUse('bash', { command: 'touch bashed' }));
      return reply(toolUse('glob', { pattern: '*.md' }));
    }
    return replyText(`summary ${helper}: found what was asked`);
  });
  return { leadRequests };
}

function lines(stdout: string): Line[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Line);
}

describe('explore runs read-only helpers in parallel', () => {
  it('three helpers overlap, cannot write or run commands, and their summaries and spend reach the lead', async () => {
    const { leadRequests } = script();
    writeFileSync(path.join(ws.dir, 'CLAUDE.md'), 'Project rule: answer in one line.\n');
    const run = await runCli(['-p', 'look around', '--output-format', 'stream-json', '--verbose'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(run.code, run.stderr).toBe(0);
    expect(fake.unscripted, 'every request was answered by the script').toHaveLength(0);

    // Three helpers, each asked twice; their first requests all came before any second one.
    const helperRequests = fake.requests.filter((r) => HELPER.test(r.agent ?? ''));
    expect(new Set(helperRequests.map((r) => r.agent))).toEqual(new Set(['lead/explore-1', 'lead/explore-2', 'lead/explore-3']));
    expect(helperRequests).toHaveLength(6);
    expect(helperRequests.slice(0, 3).every((r) => assistantTurns(r) === 0)).toBe(true);

    // Helpers know the project's instructions.
    for (const request of helperRequests) expect(JSON.stringify(request.body.system)).toContain('Project rule: answer in one line.');
    // Helpers have only the tools that read; helper 2's write_file and bash were refused, nothing written.
    for (const request of helperRequests) expect(request.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(['glob', 'grep', 'read_file']);
    const second = helperRequests.find((r) => r.agent === 'lead/explore-2' && assistantTurns(r) === 1)!;
    const results = second.body.messages.at(-1).content.filter((b: Line) => b.type === 'tool_result');
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(result.is_error).toBe(true);
      expect(JSON.stringify(result.content)).toContain('unknown tool');
    }
    expect(existsSync(path.join(ws.dir, 'evil.txt'))).toBe(false);
    expect(existsSync(path.join(ws.dir, 'bashed'))).toBe(false);

    // The lead's next request carries the three summaries as the explore call's result, and no helper's own turns.
    expect(leadRequests).toHaveLength(2);
    const leadMessages = leadRequests[1]!.body.messages as Line[];
    const exploreResult = leadMessages.at(-1)!.content.find((b: Line) => b.type === 'tool_result' && b.tool_use_id === 'toolu_explore');
    const resultText = JSON.stringify(exploreResult.content);
    for (const n of ['1', '2', '3']) expect(resultText).toContain(`summary ${n}: found what was asked`);
    expect(leadMessages).toHaveLength(3);
    expect(JSON.stringify(leadMessages)).not.toContain('evil.txt');

    // stream-json: the helpers' lines are nested under the explore call, in the lead's name.
    const out = lines(run.stdout);
    const nested = out.filter((line) => line.subagent !== undefined);
    expect(new Set(nested.map((line) => line.subagent))).toEqual(new Set(['lead/explore-1', 'lead/explore-2', 'lead/explore-3']));
    for (const line of nested) expect(line).toMatchObject({ parent_tool_use_id: 'toolu_explore', agent: 'lead' });
    expect(
      out.filter((line) => line.subagent === undefined && line.type !== 'system' && line.type !== 'result').every((line) => line.parent_tool_use_id === null),
    ).toBe(true);

    // Spend: the helpers' six calls count in the lead's totals, the run's total and the run record.
    const result = out.at(-1)!;
    const logs = path.join(ws.dir, '.team', 'logs');
    const recordFile = readdirSync(logs).find((name) => /^run-.*\.json$/.test(name))!;
    const record = JSON.parse(readFileSync(path.join(logs, recordFile), 'utf8'));
    const lead = record.cost.agents.lead;
    expect(lead.model_calls).toBe(8);
    expect(lead.subagents).toMatchObject({ count: 3, model_calls: 6 });
    expect(lead.subagents.cost_usd).toBeGreaterThan(0);
    expect(result.total_cost_usd).toBeCloseTo(lead.cost_usd, 8);
    expect(result.total_cost_usd).toBeGreaterThan(lead.cost_usd - lead.subagents.cost_usd);
    expect(run.stderr).toMatch(/cost: \$[\d.]+ \(lead \$[\d.]+ incl\. 3 subagents\)/);
  }, 60_000);
});

describe('explore and the budget', () => {
  it('a reached budget of the parent stops its helpers before they call the model', async () => {
    script();
    const run = await runCli(['-p', 'look around', '--output-format', 'stream-json', '--verbose', '--max-budget-usd', '0.000001'], {
      cwd: ws.dir,
      env: { ANTHROPIC_BASE_URL: fake.url },
    });
    expect(
      fake.requests.filter((r) => HELPER.test(r.agent ?? '')),
      'no helper called the model',
    ).toHaveLength(0);
    const explore = lines(run.stdout).find(
      (line) => line.type === 'user' && line.subagent === undefined && line.message.content[0].tool_use_id === 'toolu_explore',
    );
    expect(explore!.message.content[0].content).toMatch(/## lead\/explore-1 \(readme\)\n\(stopped: (team )?budget: /);
  }, 60_000);
});

describe('explore and the parent', () => {
  it("the parent's interrupt stops every helper in flight, and their usage is the parent's", async () => {
    const backend = new ModelClient({ apiKey: 'sk-test-key-1234567890', baseURL: fake.url, maxRetries: 0, retryBaseMs: 1, timeoutMs: 10_000 });
    const readTools = coreTools().filter((tool) => tool.effects?.every((effect) => effect === 'read'));
    const hub = new EventHub();
    const events: EventRecord[] = [];
    hub.subscribe((event) => events.push(event as EventRecord));
    const parent = new AgentLoop({
      name: 'ada',
      model: 'claude-sonnet-4-6',
      system: "You are 'ada', role: coder, team: test.",
      tools: new ToolRegistry([subagentTool({ backend, model: 'claude-sonnet-4-6', maxTokens: 1024, readTools })]),
      backend,
      events: agentEmitter(hub, 'ada'),
      workspace: new Root(ws.dir),
      maxTokens: 1024,
      maxTurns: 5,
    });
    fake.respond((request) => {
      if (request.agent === 'ada') return reply(toolUse('explore', { tasks: [{ prompt: 'one' }, { prompt: 'two' }] }, 'toolu_ex'));
      // The first helper answers (its usage is charged before the interrupt); the second hangs.
      if (request.agent === 'ada/explore-1') return replyText('one: done');
      if (request.agent === 'ada/explore-2') return { kind: 'hang' };
      return undefined;
    });
    const turn = parent.runTurn('look');
    await fake.waitForRequests(3);
    // Interrupted once helper 1 has answered and helper 2 is waiting on the model.
    await until(() => events.some((e) => e.type === 'usage' && e.subagent === 'ada/explore-1'));
    parent.interrupt();
    expect(await turn).toEqual({ kind: 'interrupted' });

    const result = events.find((e) => e.type === 'tool_result' && e.id === 'toolu_ex' && e.subagent === undefined)!;
    expect(result).toMatchObject({ ok: false });
    expect(String(result.content)).toContain('interrupted');
    expect(events.some((e) => e.type === 'error' && e.subagent === 'ada/explore-2' && e.interrupted === true)).toBe(true);
    for (const event of events.filter((e) => e.subagent !== undefined)) expect(event).toMatchObject({ agent: 'ada', parent_tool_use_id: 'toolu_ex' });
    // Two model calls (the parent's and helper 1's) in the parent's totals; the helper's is not in its conversation.
    expect(parent.totals.modelCalls).toBe(2);
    expect(JSON.stringify(parent.messages)).not.toContain('one: done');
    // A resume rebuilds the same conversation from the log, where the helpers' events are the parent's.
    const replayed = new Transcript();
    for (const event of events) replayed.apply(event as never);
    replayed.commit();
    expect(replayed.messages).toEqual(parent.messages);
  });
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
