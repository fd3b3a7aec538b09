// Budgets: the limits math, one soft warning per limit, the hard stop before a model call, and
// extension (by the person through the approval queue, or /budget), with a fake clock.
import { usageFields } from '../../helpers/usage-event.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalQueue } from '../../../src/runtime/store/memory-approvals.js';
import {
  Budget,
  BudgetConfigError,
  budgetStopSummary,
  checkLimits,
  describeHit,
  extendLimits,
  loadBudgetSettings,
  parseBudgetSettings,
} from '../../../src/runtime/budget/budget.js';
import { EventHub, type EventFields, type HuddleEvent } from '../../../src/runtime/events/events.js';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { FileSpendLedger } from '../../../src/runtime/store/file/spend-ledger.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The team's spend ledger (the file backend's) in a fresh temp team directory. */
function ledgerIn(teamDir: string, hub: EventHub): FileSpendLedger {
  return new FileSpendLedger({ teamDir, board: new FileBoard(path.join(teamDir, 'tasks')), hub });
}

function setup(settings: string, options: { answerer?: boolean; teamDir?: string } = {}) {
  const hub = new EventHub();
  const events: HuddleEvent[] = [];
  hub.subscribe((event) => events.push(event));
  const approvals = new ApprovalQueue(hub);
  if (options.answerer) approvals.attachAnswerer();
  let now = 1_000_000;
  const teamDir = options.teamDir ?? mkdtempSync(path.join(tmpdir(), 'huddle-budget-team-'));
  if (!options.teamDir) dirs.push(teamDir);
  const ledger = ledgerIn(teamDir, hub);
  const budget = new Budget({ hub, approvals, ledger, settings: parseBudgetSettings(settings), now: () => now });
  const spend = (agent: string, usd: number) => hub.emit(agent, 'usage', { cost_usd: usd, input_tokens: 10, output_tokens: 5 } as EventFields['usage']);
  const warnings = () => events.filter((e) => e.type === 'warning').map((e) => String(e.message));
  return { hub, events, approvals, budget, ledger, teamDir, spend, warnings, advance: (ms: number) => (now += ms) };
}

describe('budget limits math', () => {
  it('finds hard and soft hits per kind, and describes them', () => {
    const spend = { usd: 1.02, turns: 8, startedAt: 0 };
    const result = checkLimits('alice', spend, { usd: 1, turns: 10, minutes: 10 }, 9 * 60_000, 0.8);
    expect(result.hard).toEqual([{ scope: 'alice', kind: 'usd', spent: 1.02, limit: 1 }]);
    expect(result.soft.map((hit) => hit.kind)).toEqual(['minutes', 'turns']);
    expect(describeHit(result.hard[0]!)).toBe('budget: $1.02 of $1.00');
    expect(describeHit({ scope: 'team', kind: 'turns', spent: 12, limit: 10 })).toBe('team budget: 12 of 10 turns');
  });

  it('extends by the step, else by the original amount, from the spend when past the limit', () => {
    expect(extendLimits({ usd: 1, turns: 10 }, ['usd'], {}, { usd: 1 }, { usd: 1.3 })).toEqual({ usd: 2.3, turns: 10 });
    expect(extendLimits({ usd: 2 }, ['usd'], { usd: 0.5 }, { usd: 1 }, { usd: 1 })).toEqual({ usd: 2.5 });
  });

  it('reads .team/budget.json with flags over its team limits, and rejects bad files clearly', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'huddle-budget-'));
    try {
      writeFileSync(
        path.join(dir, 'budget.json'),
        JSON.stringify({ team: { usd: 5, turns: 100 }, agents: { alice: { usd: 1 }, '*': { turns: 20 } }, soft: 0.5 }),
      );
      const settings = loadBudgetSettings(dir, { usd: 2 });
      expect(settings.team).toEqual({ usd: 2, turns: 100 });
      expect(settings.agents.alice).toEqual({ usd: 1 });
      expect(settings.soft).toBe(0.5);
      writeFileSync(path.join(dir, 'budget.json'), '{"team": {"usd": -1}}');
      expect(() => loadBudgetSettings(dir)).toThrow(/team: a usd budget takes a number above 0, not '-1'/);
      writeFileSync(path.join(dir, 'budget.json'), '{"teem": {}}');
      expect(() => loadBudgetSettings(dir)).toThrow(BudgetConfigError);
      writeFileSync(path.join(dir, 'budget.json'), '{oops');
      expect(() => loadBudgetSettings(dir)).toThrow(/not valid JSON.*fix or delete it/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Budget', () => {
  let closeAll: Array<() => void> = [];
  afterEach(() => {
    for (const close of closeAll) close();
    closeAll = [];
  });

  it('warns once at the soft limit, then stops at the hard limit with nobody to ask', async () => {
    const t = setup('{"agents": {"alice": {"usd": 1}}}');
    closeAll.push(() => t.budget.close());
    const exhausted: string[] = [];
    t.budget.onExhausted((stop) => exhausted.push(stop.reason));
    t.spend('alice', 0.85);
    expect(await t.budget.gate('alice')).toBeUndefined();
    expect(await t.budget.gate('alice')).toBeUndefined();
    expect(t.warnings().filter((w) => w.includes('85 % of its usd budget'))).toHaveLength(1);
    t.spend('bob', 5); // bob has no limit of his own and there is no team limit
    expect(await t.budget.gate('bob')).toBeUndefined();
    t.spend('alice', 0.17);
    expect(await t.budget.gate('alice')).toBe('budget: $1.02 of $1.00');
    expect(exhausted).toEqual(['budget: $1.02 of $1.00']);
    expect(t.budget.exhausted).toMatchObject({ agent: 'alice', scope: 'alice', kind: 'usd', limit: 1 });
    expect(budgetStopSummary(t.budget.exhausted!, [{ name: 'alice', costUsd: 1.02, modelCalls: 2 }])).toContain('alice reached its usd budget');
  });

  it('counts turns and wall minutes, per agent and for the team', async () => {
    const t = setup('{"team": {"turns": 3}, "agents": {"*": {"minutes": 10}}}');
    closeAll.push(() => t.budget.close());
    expect(await t.budget.gate('alice')).toBeUndefined(); // alice's clock starts here
    t.spend('alice', 0);
    t.spend('bob', 0);
    t.advance(9 * 60_000);
    expect(await t.budget.gate('alice')).toBeUndefined();
    expect(t.warnings().some((w) => w.includes('of its minutes budget'))).toBe(true);
    t.advance(60_000);
    expect(await t.budget.gate('alice')).toBe('budget: 10.0 of 10.0 min');
    t.spend('bob', 0); // the third model call of the team; bob's own clock started at his first
    expect(t.budget.check('bob')).toMatchObject({ scope: 'bob', kind: 'minutes' });
    expect(t.budget.check('carol')).toMatchObject({ scope: 'team', kind: 'turns', spent: 3, limit: 3 });
  });

  it('pauses at a hard limit until the person extends it (y), or stops the agent (n)', async () => {
    const t = setup('{"team": {"usd": 1}}', { answerer: true });
    closeAll.push(() => t.budget.close());
    t.spend('alice', 1.2);
    const first = t.budget.gate('alice');
    // Two agents on the same team limit: one question each, one extension in all.
    const second = t.budget.gate('bob');
    await Promise.resolve();
    const asked = t.approvals.list();
    expect(asked.map((r) => [r.agent, r.tool, r.summary])).toEqual([
      ['alice', 'budget', 'team budget: $1.20 of $1.00'],
      ['bob', 'budget', 'team budget: $1.20 of $1.00'],
    ]);
    expect(asked[0]!.reason).toBe('extending adds $1.00');
    t.approvals.resolve(asked[0]!.id, 'approve');
    expect(await first).toBeUndefined();
    expect(await second).toBeUndefined();
    expect(t.budget.settings.team.usd).toBeCloseTo(2.2); // from the spend, once
    expect(t.approvals.size).toBe(0);

    t.spend('alice', 1.1);
    const third = t.budget.gate('alice');
    await Promise.resolve();
    t.approvals.resolve(t.approvals.list()[0]!.id, 'deny');
    expect(await third).toBe('stopped at team budget: $2.30 of $2.20');
    expect(t.budget.exhausted).toBeUndefined(); // a person decided: not a headless exhaustion
  });

  it('/budget-style changes release an agent waiting on a limit that no longer holds', async () => {
    const t = setup('{"agents": {"alice": {"turns": 1}}}', { answerer: true });
    closeAll.push(() => t.budget.close());
    t.spend('alice', 0);
    const waiting = t.budget.gate('alice');
    await Promise.resolve();
    expect(t.approvals.size).toBe(1);
    t.budget.set('alice', 'turns', 5);
    expect(await waiting).toBeUndefined();
    expect(t.approvals.size).toBe(0);
    expect(t.budget.limitsFor('alice')).toEqual({ turns: 5 });
    expect(t.budget.extend('alice')).toEqual({ turns: 10 }); // nothing reached: all its limits, by the amount last set
  });

  it("counts this run's spend: what the ledger held when the run began is the baseline", async () => {
    const first = setup('{"team": {"usd": 1}, "agents": {"alice": {"turns": 2}}}');
    closeAll.push(() => first.budget.close());
    first.spend('alice', 0.9);
    first.spend('alice', 0.05);
    await first.ledger.flush();
    expect(first.budget.check('alice')).toMatchObject({ scope: 'alice', kind: 'turns', spent: 2 });
    // A resumed run on the same team: the ledger remembers, the new run's budget starts from zero.
    const second = setup('{"team": {"usd": 1}, "agents": {"alice": {"turns": 2}}}', { teamDir: first.teamDir });
    closeAll.push(() => second.budget.close());
    expect(second.ledger.data.agents.alice).toMatchObject({ model_calls: 2 });
    expect(second.budget.spendOf('alice')).toMatchObject({ usd: 0, turns: 0 });
    expect(second.budget.check('alice')).toBeUndefined();
    second.spend('alice', 0.5);
    expect(second.budget.spendOf('team').turns).toBe(1);
    expect(second.budget.spendOf('team').usd).toBeCloseTo(0.5);
    expect(second.budget.check('alice')).toBeUndefined();
  });

  it('a team budget counts the spend of every process of the team (one ledger)', async () => {
    const here = setup('{"team": {"usd": 1}}');
    closeAll.push(() => here.budget.close());
    // Another process of the same team: its own hub and ledger object, the same ledger file.
    const elsewhere = new EventHub();
    const theirs = ledgerIn(here.teamDir, elsewhere);
    elsewhere.emit('bob', 'usage', usageFields(0.7, 1, 1));
    await theirs.close();
    here.spend('alice', 0.4);
    await here.ledger.flush();
    expect(here.ledger.data.agents).toMatchObject({ alice: { cost_usd: 0.4 }, bob: { cost_usd: 0.7 } });
    expect(here.budget.check('alice')).toMatchObject({ scope: 'team', kind: 'usd', limit: 1 });
    expect(here.budget.spendOf('team').usd).toBeCloseTo(1.1);
  });

  it('ends the wait as interrupted when the agent is interrupted', async () => {
    const t = setup('{"team": {"usd": 0.5}}', { answerer: true });
    closeAll.push(() => t.budget.close());
    t.spend('alice', 1);
    const abort = new AbortController();
    const waiting = t.budget.gate('alice', abort.signal);
    await Promise.resolve();
    abort.abort();
    expect(await waiting).toBe('interrupted');
    expect(t.approvals.size).toBe(0);
  });
});
