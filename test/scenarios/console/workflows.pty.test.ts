// /workflows (docs/console.md#views, docs/workflows.md): a workflow started from the console with `/workflow run
// FILE`, shown live at 80×24 and 160×45: its phases, each step's agent and state, tokens, cost and time. The keys act
// on it: p pauses (the next step does not start) and resumes, r restarts the selected agent (a new one takes its
// step's task), s stops the run at its gate; run again, it reuses every finished step and asks the gate again, which
// the person approves in the needs-you queue (Ctrl+Y, y). The built CLI in a real PTY against the fake Messages API.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { useConsoles } from '../../helpers/console-pty.js';
import { rowOf, rowsOf } from '../../helpers/console-screen.js';

const CTRL_Y = '\x19';

const WORKFLOW = `export default {
  name: 'flow',
  phases: [
    { name: 'read', concurrency: 1, steps: [{ name: 'a', prompt: 'Read a.' }, { name: 'b', prompt: 'Read b.' }, { name: 'c', prompt: 'Read c.' }] },
    { name: 'reduce', steps: (previous) => [{ name: 'sum', prompt: previous.map((r) => r.result).join(', ') }] },
    { name: 'ship', gate: { person: 'Ship the sum?' } },
  ],
};
`;

let fake: FakeApi;
let dir: string;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-workflows-view-'));
  writeFileSync(path.join(dir, 'flow.mjs'), WORKFLOW);
});

afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = useConsoles();

/** The screen row of a step's agent. */
function row(screen: string, agent: string): string {
  return rowsOf(screen)[rowOf(screen, `  ${agent} `)] ?? '';
}

describe.each([
  [80, 24],
  [160, 45],
])('/workflows at %i×%i', (cols, rows) => {
  it('shows the run live; pause, restart one agent, resume, stop at the gate; run again and approve', async () => {
    // read-a's first agent never answers (it is restarted); every other step completes its task at once.
    let firstOfA = true;
    fake.respond(async (request) => {
      const agent = request.agent ?? '';
      if (!/^(read|reduce)-/.test(agent)) return undefined;
      const history = JSON.stringify(request.body?.messages ?? []);
      if (history.includes('tool_result')) return replyText('Done.');
      if (agent === 'read-a' && firstOfA) {
        firstOfA = false;
        return { kind: 'hang' };
      }
      const task = /Task #(\d+) is yours/.exec(history)?.[1];
      return reply(toolUse('task_update', { task_id: Number(task), status: 'completed', result: `${agent} read` }));
    });
    const tty = await start({ fake, workspace: dir, cols, rows, args: ['--permission-mode', 'auto'] });
    await tty.waitForText('ask the lead');
    await tty.type('/workflow run flow.mjs');
    tty.press('enter');
    // The view opens on the run: read-a at work (its agent hangs), b and c queued, the later phases waiting.
    let screen = await tty.waitForScreen((s) => s.includes('Workflow flow') && row(s, 'read-a').includes('running'), { what: 'read-a running' });
    expect(row(screen, 'read-b')).toContain('queued');
    expect(screen).toContain('gate: Ship the sum?');
    expect(screen).toMatch(/running · \d+s · /);

    // p: paused, no new step starts. r on the selected agent (read-a, the first): a new agent takes its task and
    // completes it; read-b still does not start.
    tty.press('p');
    await tty.waitForText(/paused · /);
    // Once its agent has asked the model (it is started): r reaches it.
    await tty.waitForScreen(() => fake.requests.some((r) => r.agent === 'read-a'), { what: "read-a's first request" });
    tty.press('r');
    await tty.waitForText('restarting read-a');
    screen = await tty.waitForScreen((s) => row(s, 'read-a').includes('done'), { what: 'read-a done after its restart' });
    expect(row(screen, 'read-a')).toMatch(/#\d+ +\d[\d.]*k?\/\d[\d.]*k? +\$0\.\d{3} +\d+s/);
    expect(row(screen, 'read-b')).toContain('queued');
    expect(screen).toMatch(/paused · /);
    expect(fake.requests.filter((r) => r.agent === 'read-a' && !JSON.stringify(r.body?.messages ?? []).includes('tool_result'))).toHaveLength(2);
    expect(fake.requests.some((r) => r.agent === 'read-b')).toBe(false);

    // p again: resumed; b, c and the reduce step run, then the gate waits for the person. s stops the run there.
    tty.press('p');
    await tty.waitForScreen((s) => s.includes('waiting for you: Ship the sum?') && row(s, 'reduce-sum').includes('done'), { what: 'the gate waiting' });
    tty.press('s');
    screen = await tty.waitForText(/stopped · /);
    expect(screen).toContain('stopped by the person');

    // Run again: every step is reused (no agent starts), the gate is asked again; approved in the queue, it is done.
    const requests = fake.requests.length;
    tty.press('escape');
    await tty.type('/workflow run flow.mjs');
    tty.press('enter');
    screen = await tty.waitForScreen((s) => s.includes('waiting for you: Ship the sum?'), { what: 'the gate asked again' });
    for (const agent of ['read-a', 'read-b', 'read-c', 'reduce-sum']) expect(row(screen, agent)).toContain('reused');
    tty.write(CTRL_Y);
    await tty.waitForText('Needs you (1 waiting)');
    tty.press('y');
    await tty.waitForText('Needs you (0 waiting)');
    tty.press('escape');
    await tty.type('/workflows');
    tty.press('enter');
    screen = await tty.waitForText(/done · \d+s · /);
    expect(fake.requests.slice(requests).filter((r) => /^(read|reduce)-/.test(r.agent ?? ''))).toEqual([]);
    // The view fits the terminal: no row wider than it, the status bar still last.
    for (const line of rowsOf(screen)) expect(line.length).toBeLessThanOrEqual(cols);
  }, 180_000);
});
