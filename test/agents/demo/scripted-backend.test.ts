// The scripted demo model drives the REAL team (board, bus, roster, tools) to the end of its
// story: the test is what proves `huddle demo` shows a working session and not a mock-up.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDemoWorkspace, type DemoWorkspace } from '../../../src/agents/demo/demo-workspace.js';
import { ScriptedDemoBackend } from '../../../src/agents/demo/scripted-backend.js';
import { openFileStore } from '../../../src/runtime/store/file/file-store.js';
import { Team } from '../../../src/agents/lifecycle/team.js';
import { resolveConfig } from '../../../src/runtime/config.js';
import { EventHub } from '../../../src/runtime/events/events.js';
import { InterruptedError, type ModelRequest } from '../../../src/runtime/model/model-client.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';

const FAST = { pace: { charsPerChunk: 40, chunkDelayMs: 1 }, thinkMs: 0 };

let demo: DemoWorkspace | undefined;
let team: Team | undefined;
afterEach(async () => {
  await team?.close();
  await demo?.cleanup();
  team = demo = undefined;
});

/** Resolves when `check` passes, re-checked on every team event; rejects at the deadline (a hang guard). */
function waitFor(hub: EventHub, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let busy = false;
    let again = false;
    const finish = (error?: Error) => {
      unsubscribe();
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const probe = async () => {
      if (busy) return void (again = true);
      busy = true;
      try {
        do {
          again = false;
          if (await check()) return finish();
        } while (again);
      } finally {
        busy = false;
      }
    };
    const unsubscribe = hub.subscribe(() => void probe().catch(finish));
    const timer = setTimeout(() => finish(new Error(`not settled within ${timeoutMs} ms`)), timeoutMs);
    void probe().catch(finish);
  });
}

function request(system: string, messages: ModelRequest['messages']): ModelRequest {
  return { model: 'huddle-demo', system, messages, tools: [], maxTokens: 1000 };
}

describe('ScriptedDemoBackend', () => {
  it('plays the whole team session through the real team', async () => {
    demo = await createDemoWorkspace();
    expect(path.basename(demo.dir)).toMatch(/^huddle-demo-/);
    const hub = new EventHub();
    const config = { ...resolveConfig({ cwd: demo.dir }, { ANTHROPIC_API_KEY: 'unused' }), idleTimeoutMs: 60_000 };
    const workspace = new Workspace(demo.dir);
    const store = await openFileStore(workspace, { hub, secrets: [] });
    const open = await Team.open({ config, workspace, hub, store, backend: new ScriptedDemoBackend(FAST) });
    team = open;
    const started = Date.now();
    // The person types to the lead mid-session (on the first report): the demo explains and carries on.
    const leadTexts: string[] = [];
    let typed = false;
    hub.subscribe((event) => {
      if (event.agent === 'lead' && event.type === 'text') leadTexts.push(String(event.text));
      if (!typed && event.type === 'tool_call' && event.name === 'send_message') {
        typed = true;
        open.lead.prompt('How is it going?');
      }
    });
    open.start();
    open.lead.prompt('Build a tiny greeting library with tests');

    const finished = (name: string) => open.ctx.roster.members().find((m) => m.name === name)?.status === 'shutdown';
    await waitFor(hub, async () => open.lead.lastText.includes('### Summary') && finished('alice') && finished('bob') && (await open.isSettled()), 20_000);
    console.log(`fast-pace demo session: ${Date.now() - started} ms`);

    const tasks = (await open.ctx.board.scan()).tasks;
    expect(tasks.map((t) => [t.id, t.subject, t.status])).toEqual([
      [1, 'Write greet.js', 'completed'],
      [2, 'Write tests for greet.js', 'completed'],
      [3, 'Write README.md', 'completed'],
    ]);
    for (const file of ['greet.js', 'greet.test.js', 'README.md']) expect(existsSync(path.join(demo.dir, file))).toBe(true);
    const run = spawnSync(process.execPath, ['greet.test.js'], { cwd: demo.dir, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('3 tests passed');

    const roster = open.ctx.roster.members();
    expect(roster.filter((m) => m.name !== 'lead').map((m) => [m.name, m.status])).toEqual([
      ['alice', 'shutdown'],
      ['bob', 'shutdown'],
    ]);
    expect(typed).toBe(true);
    expect(leadTexts.some((text) => text.includes('scripted demo'))).toBe(true);
    for (const file of ['greet.js', 'greet.test.js', 'README.md']) expect(open.lead.lastText).toContain(file);
    expect(open.lead.lastText).toContain('node greet.test.js');
  });

  it('throws InterruptedError promptly when aborted mid-stream', async () => {
    // A pause between chunks longer than the test may run: the call ends only because the abort ends the pause.
    const backend = new ScriptedDemoBackend({ pace: { charsPerChunk: 2, chunkDelayMs: 600_000 }, thinkMs: 0 });
    const abort = new AbortController();
    const chunks: string[] = [];
    const call = backend.call(request("You are 'lead', role: lead, team: t.", [{ role: 'user', content: 'Build it' }]), {
      signal: abort.signal,
      onText: (delta) => {
        chunks.push(delta);
        // Once the backend is in its pause after this chunk.
        if (chunks.length === 1) setImmediate(() => abort.abort());
      },
    });
    await expect(call).rejects.toBeInstanceOf(InterruptedError);
    expect(chunks).toHaveLength(1);
  });

  it('answers off-script input with the scripted-demo explanation', async () => {
    const backend = new ScriptedDemoBackend(FAST);
    // A lead that has planned and spawned, and waits for reports.
    const done = ['task_create', 'task_create', 'task_create', 'spawn_teammate', 'spawn_teammate'];
    const lead = await backend.call(
      request("You are 'lead', role: lead, team: t.", [
        { role: 'user', content: 'Build a tiny greeting library with tests' },
        { role: 'assistant', content: done.map((name, i) => ({ type: 'tool_use' as const, id: `toolu_${i}`, name, input: { name: `m${i}` } })) },
        { role: 'user', content: done.map((_, i) => ({ type: 'tool_result' as const, tool_use_id: `toolu_${i}`, content: `ok #${i + 1}` })) },
        { role: 'assistant', content: 'waiting' },
        { role: 'user', content: 'what are you doing?' },
      ]),
    );
    expect(lead.message.stop_reason).toBe('end_turn');
    expect(lead.message.model).toBe('huddle-demo');
    expect(lead.costUsd).toBe(0);
    expect(JSON.stringify(lead.message.content)).toContain('scripted demo');

    const alice = await backend.call(
      request("You are 'alice', role: coder, team: t.", [
        { role: 'user', content: 'You are alice…' },
        { role: 'assistant', content: 'Hi' },
        { role: 'user', content: 'hello there' },
      ]),
    );
    const blocks = alice.message.content;
    expect(blocks[0]?.type === 'text' && blocks[0].text).toContain('scripted demo');
    expect(blocks.at(-1)).toMatchObject({ type: 'tool_use', name: 'idle', input: {} });
    expect(alice.message.stop_reason).toBe('tool_use');
    expect(alice.usage.input_tokens).toBeGreaterThan(0);
  });

  it('takes an interrupted task up again after off-script input', async () => {
    const backend = new ScriptedDemoBackend(FAST);
    const bob = await backend.call(
      request("You are 'bob', role: tester, team: t.", [
        { role: 'user', content: 'You are bob…' },
        { role: 'assistant', content: 'Hi' },
        { role: 'user', content: '<auto-claimed>Task #7: Write tests for greet.js</auto-claimed>\ngreet.test.js' },
        { role: 'assistant', content: 'Claimed #7 (Wri' }, // cut by Esc
        { role: 'user', content: 'sorry, go on' },
      ]),
    );
    const text = bob.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    expect(text).toContain('scripted demo');
    expect(text).toContain('Back to #7');
    expect(bob.message.content.at(-1)).toMatchObject({ type: 'tool_use', name: 'write_file', input: { path: 'greet.test.js' } });
  });
});
