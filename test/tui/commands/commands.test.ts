// Slash commands: parsing, completion, and one-line hints for bad input (never a throw).
import { describe, expect, it } from 'vitest';
import { completeLine, runCommandLine } from '../../../src/tui/commands/dispatch.js';
import { COMMANDS } from '../../../src/tui/commands/commands.js';
import { createConsoleStore, emptyAgent } from '../../../src/tui/state/console-store.js';
import type { CommandContext } from '../../../src/tui/commands/types.js';
import type { ConsoleController } from '../../../src/tui/console-controller.js';

function context(calls: string[] = []): CommandContext {
  const store = createConsoleStore({ model: 'claude-x', endpoint: '' });
  store.setState((s) => ({ agents: { ...s.agents, alice: emptyAgent('alice', 'coder'), bob: emptyAgent('bob', 'tester') }, order: ['lead', 'alice', 'bob'] }));
  const controller = {
    spawn: async (name: string, role: string, prompt: string) => (calls.push(`spawn ${name} ${role} ${prompt}`), `spawned ${name}`),
    sendTo: async (name: string, text: string) => void calls.push(`send ${name} ${text}`),
    shutdown: async (name: string, now: boolean) => (calls.push(`shutdown ${name} ${now}`), 'ok'),
    interrupt: (name: string) => (calls.push(`interrupt ${name}`), true),
    setModel: (model: string) => void calls.push(`model ${model}`),
    note: (agent: string, text: string) => void calls.push(`note ${agent} ${text.split('\n')[0]}`),
    summary: async () => (calls.push('summary'), ['run record: .team/logs/run-x.json']),
    startBestOf: (options: unknown) => (calls.push(`best-of ${JSON.stringify(options)}`), 'best-of started'),
    reopenBestOf: () => undefined,
  } as unknown as ConsoleController;
  return { controller, state: store.getState(), focus: 'lead' };
}

describe('slash commands', () => {
  it('has every command docs/console.md#commands lists', () => {
    const names = COMMANDS.map((c) => c.name).sort();
    expect(names).toEqual(
      [
        'backlog',
        'broadcast',
        'clear',
        'compact',
        'cost',
        'help',
        'interrupt',
        'model',
        'quit',
        'restart',
        'send',
        'shutdown',
        'spawn',
        'tasks',
        'team',
        'merge',
        'diff',
        'worktree',
        'best-of',
        'approvals',
        'budget',
        'config',
        'mcp',
        'summary',
        'shell',
        'grid',
        'rewind',
        'workflows',
        'workflow',
      ].sort(),
    );
  });

  it('/best-of takes N, its flags (a quoted --verify command) and the task; bad input is one line', async () => {
    const calls: string[] = [];
    const ctx = context(calls);
    expect(await runCommandLine('/best-of 3 --models opus,haiku --agents huddle,codex --verify "npm test -- -q" Fix the parser', ctx)).toEqual({
      kind: 'ok',
      message: 'best-of started',
    });
    expect(JSON.parse(calls[0]!.slice('best-of '.length))).toEqual({
      task: 'Fix the parser',
      n: 3,
      // Aliases resolved to model ids, as --model does.
      models: [expect.stringMatching(/^claude-opus/), expect.stringMatching(/^claude-haiku/)],
      agents: ['huddle', 'codex'],
      verify: 'npm test -- -q',
    });
    expect(await runCommandLine('/best-of', ctx)).toEqual({ kind: 'error', message: 'no best-of run yet: /best-of N TASK starts one' });
    expect(await runCommandLine('/best-of 1 Fix it', ctx)).toMatchObject({ kind: 'error', message: expect.stringMatching(/^usage: \/best-of/) });
    expect(await runCommandLine('/best-of 2 --agents robot Fix it', ctx)).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^--agents takes huddle or /),
    });
    expect(await runCommandLine('/best-of 2 --verify', ctx)).toEqual({ kind: 'error', message: '--verify needs a value' });
    expect(calls).toHaveLength(1);
  });

  it('runs commands with their arguments', async () => {
    const calls: string[] = [];
    const ctx = context(calls);
    expect(await runCommandLine('/spawn carol coder write the docs', ctx)).toEqual({ kind: 'ok', message: 'spawned carol' });
    await runCommandLine('/send alice  please hurry', ctx);
    await runCommandLine('/shutdown bob --now', ctx);
    await runCommandLine('/interrupt', ctx);
    expect(calls).toEqual(['spawn carol coder write the docs', 'send alice please hurry', 'shutdown bob true', 'interrupt lead']);
    expect(await runCommandLine('/tasks', ctx)).toEqual({ kind: 'view', view: 'tasks' });
    expect(await runCommandLine('/quit', ctx)).toEqual({ kind: 'quit' });
  });

  it('/summary makes the run record and opens its view', async () => {
    const calls: string[] = [];
    expect(await runCommandLine('/summary', context(calls))).toEqual({ kind: 'view', view: 'summary' });
    expect(calls).toEqual(['summary']);
  });

  it('/cost shows cache reads and writes per agent, as a page (never in a pane)', async () => {
    const calls: string[] = [];
    const ctx = context(calls);
    ctx.state.agents.lead = {
      ...ctx.state.agents.lead!,
      inputTokens: 1000,
      cacheReadTokens: 800,
      cacheWriteTokens: 150,
      sharedCacheReadTokens: 0,
      outputTokens: 20,
      costUsd: 0.001,
    };
    (ctx.controller as unknown as { taskSpendLines: () => string[] }).taskSpendLines = () => [];
    const result = await runCommandLine('/cost', ctx);
    expect(result).toMatchObject({ kind: 'page', title: 'Cost: spend per agent and per task' });
    const lines = (result as { lines: string[] }).lines;
    expect(lines[0]).toBe('lead: $0.0010 (1000 in: 800 cache reads at 0.1×, 150 cache writes at 1.25×; 20 out)');
    expect(lines.at(-1)).toBe('cache: 800 read (80% of input), 150 written; across agents: 0 read by first calls from a prefix another agent or run wrote');
    expect(calls).toEqual([]);
  });

  it("/cost shows the cache reads a teammate's first call made of the prefix another agent wrote", async () => {
    const calls: string[] = [];
    const ctx = context(calls);
    const base = { ...ctx.state.agents.lead!, cacheWriteTokens: 0, outputTokens: 10, costUsd: 0.001 };
    ctx.state.agents.lead = { ...base, inputTokens: 3000, cacheReadTokens: 0, cacheWriteTokens: 2500, sharedCacheReadTokens: 0 };
    ctx.state.agents.bob = { ...base, name: 'bob', role: 'coder', inputTokens: 2000, cacheReadTokens: 1800, sharedCacheReadTokens: 1500 };
    ctx.state.order = ['lead', 'bob'];
    (ctx.controller as unknown as { taskSpendLines: () => string[] }).taskSpendLines = () => [];
    const lines = ((await runCommandLine('/cost', ctx)) as { lines: string[] }).lines;
    expect(lines[1]).toBe(
      'bob: $0.0010 (2000 in: 1800 cache reads at 0.1× (1500 of them on its first call, written by another agent or run), 0 cache writes at 1.25×; 10 out)',
    );
    expect(lines.at(-1)).toBe(
      'cache: 1800 read (36% of input), 2500 written; across agents: 1500 read by first calls from a prefix another agent or run wrote',
    );
    expect(calls).toEqual([]);
  });

  it('answers bad input with a one-line hint', async () => {
    const ctx = context();
    expect(await runCommandLine('/spwan x', ctx)).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/unknown command \/spwan \(did you mean \/spawn\?\)/),
    });
    expect(await runCommandLine('/spawn onlyname', ctx)).toEqual({ kind: 'error', message: 'usage: /spawn NAME ROLE PROMPT' });
    expect(await runCommandLine('/send nobody hi', ctx)).toMatchObject({ kind: 'error', message: expect.stringContaining("no agent named 'nobody'") });
    expect(await runCommandLine('/shutdown alice later', ctx)).toEqual({ kind: 'error', message: 'usage: /shutdown NAME [--now]' });
  });

  it('completes command names and agent names with Tab', () => {
    const ctx = context();
    expect(completeLine('/he', ctx).line).toBe('/help ');
    expect(completeLine('/s', ctx).candidates).toEqual(['/shell', '/spawn', '/send', '/shutdown', '/summary']);
    expect(completeLine('/send al', ctx).line).toBe('/send alice ');
    expect(completeLine('/shutdown ', ctx).candidates).toEqual(['alice', 'bob']);
  });
});
