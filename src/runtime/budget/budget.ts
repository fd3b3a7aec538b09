// Budgets (dollars, wall minutes, model calls) per agent and for the whole team. Checked right
// before every model call: past a soft limit it warns once; at a hard limit the agent waits in
// `waiting` (context kept) until the person extends the budget or stops it — in the "needs you"
// queue in the console. With nobody to ask (headless) the run is over: `exhausted` is set.
//
// Spend is counted from the team's SpendLedger (the store's), not a tally of its own, so that a
// team-wide budget is one count wherever the team's agents run. A run's budget counts this run's
// spend: the ledger's totals when the Budget starts are its baseline.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Approvals } from '../store/approvals.js';
import type { EventHub, HuddleEvent } from '../events/events.js';
import type { Roster } from '../store/roster.js';
import type { SpendLedger, SpendTally } from '../store/spend-ledger.js';

export const BUDGET_KINDS = ['usd', 'minutes', 'turns'] as const;
export type BudgetKind = (typeof BUDGET_KINDS)[number];
export type BudgetLimits = Partial<Record<BudgetKind, number>>;
/** `team`, or an agent's name. */
export type BudgetScope = string;
export const TEAM_SCOPE = 'team';
/** In `agents`, the limits of every agent not named. */
export const ANY_AGENT = '*';
export const DEFAULT_SOFT_RATIO = 0.8;

export interface BudgetSettings {
  team: BudgetLimits;
  agents: Record<string, BudgetLimits>;
  /** Fraction of a hard limit at which to warn (once). 0 or 1: never. */
  soft: number;
  /** What one extension adds per kind; unset kinds add the limit's original amount again. */
  step: BudgetLimits;
}

export interface BudgetHit {
  scope: BudgetScope;
  kind: BudgetKind;
  spent: number;
  limit: number;
}

export interface BudgetStop extends BudgetHit {
  agent: string;
  reason: string;
}

export class BudgetConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetConfigError';
  }
}

export function emptySettings(): BudgetSettings {
  return { team: {}, agents: {}, soft: DEFAULT_SOFT_RATIO, step: {} };
}

export function budgetFile(teamDir: string): string {
  return path.join(teamDir, 'budget.json');
}

/** A limit given as text ("/budget alice usd 1", a flag): a positive number, or a clear error. */
export function parseLimit(kind: string, text: string): { kind: BudgetKind; value: number } {
  if (!(BUDGET_KINDS as readonly string[]).includes(kind)) throw new BudgetConfigError(`unknown budget kind '${kind}' (use usd, minutes or turns)`);
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (kind === 'turns' && !Number.isInteger(value))) {
    throw new BudgetConfigError(`a ${kind} budget takes a ${kind === 'turns' ? 'whole ' : ''}number above 0, not '${text}'`);
  }
  return { kind: kind as BudgetKind, value };
}

function parseLimits(value: unknown, where: string): BudgetLimits {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BudgetConfigError(`${where} must be an object like {"usd": 5}`);
  const limits: BudgetLimits = {};
  for (const [key, raw] of Object.entries(value)) {
    try {
      const { kind, value: n } = parseLimit(key, String(raw));
      if (typeof raw !== 'number') throw new BudgetConfigError(`a ${key} budget takes a number, not ${JSON.stringify(raw)}`);
      limits[kind] = n;
    } catch (error) {
      throw new BudgetConfigError(`${where}: ${(error as Error).message}`);
    }
  }
  return limits;
}

/** `.team/budget.json`: {"team": {...}, "agents": {"alice": {...}, "*": {...}}, "soft": 0.8, "step": {...}}. */
export function parseBudgetSettings(text: string, file = 'budget.json'): BudgetSettings {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new BudgetConfigError(`${file} is not valid JSON (${(error as Error).message}); fix or delete it`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new BudgetConfigError(`${file} must hold a JSON object`);
  const record = raw as Record<string, unknown>;
  const known = new Set(['team', 'agents', 'soft', 'step']);
  const unknown = Object.keys(record).filter((key) => !known.has(key));
  if (unknown.length) throw new BudgetConfigError(`${file}: unknown key '${unknown[0]}' (known: team, agents, soft, step)`);
  const settings = emptySettings();
  settings.team = parseLimits(record.team, `${file} team`);
  settings.step = parseLimits(record.step, `${file} step`);
  if (record.agents !== undefined) {
    if (typeof record.agents !== 'object' || record.agents === null || Array.isArray(record.agents)) {
      throw new BudgetConfigError(`${file} agents must be an object like {"alice": {"usd": 1}, "*": {"turns": 40}}`);
    }
    for (const [name, limits] of Object.entries(record.agents)) settings.agents[name] = parseLimits(limits, `${file} agents.${name}`);
  }
  if (record.soft !== undefined) {
    if (typeof record.soft !== 'number' || record.soft < 0 || record.soft > 1)
      throw new BudgetConfigError(`${file} soft must be a fraction from 0 to 1 (0.8 warns at 80 %), not ${JSON.stringify(record.soft)}`);
    settings.soft = record.soft;
  }
  return settings;
}

/** The workspace's budget file (if any) with the team limits given by flags on top. */
export function loadBudgetSettings(teamDir: string, flags: BudgetLimits = {}): BudgetSettings {
  const file = budgetFile(teamDir);
  const settings = existsSync(file) ? parseBudgetSettings(readFileSync(file, 'utf8'), file) : emptySettings();
  settings.team = { ...settings.team, ...definedOnly(flags) };
  return settings;
}

function definedOnly(limits: BudgetLimits): BudgetLimits {
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) as BudgetLimits;
}

export interface Spend {
  usd: number;
  turns: number;
  /** When this agent (or the team) started working, ms since the epoch. */
  startedAt: number;
}

function spentOf(spend: Spend, kind: BudgetKind, now: number): number {
  if (kind === 'usd') return spend.usd;
  if (kind === 'turns') return spend.turns;
  return (now - spend.startedAt) / 60_000;
}

/** Hard limits reached (spent >= limit) and soft ones (spent >= soft × limit), for one scope. */
export function checkLimits(scope: BudgetScope, spend: Spend, limits: BudgetLimits, now: number, soft: number): { hard: BudgetHit[]; soft: BudgetHit[] } {
  const result = { hard: [] as BudgetHit[], soft: [] as BudgetHit[] };
  for (const kind of BUDGET_KINDS) {
    const limit = limits[kind];
    if (limit === undefined) continue;
    const spent = spentOf(spend, kind, now);
    if (spent >= limit) result.hard.push({ scope, kind, spent, limit });
    else if (soft > 0 && soft < 1 && spent >= soft * limit) result.soft.push({ scope, kind, spent, limit });
  }
  return result;
}

export function formatAmount(kind: BudgetKind, n: number): string {
  if (kind === 'usd') return `$${n.toFixed(2)}`;
  if (kind === 'turns') return `${Math.round(n)} turns`;
  return `${n.toFixed(1)} min`;
}

/** "budget: $1.02 of $1.00" (the team's: "team budget: …"). */
export function describeHit(hit: BudgetHit): string {
  const prefix = hit.scope === TEAM_SCOPE ? 'team budget' : 'budget';
  const spent = hit.kind === 'turns' ? String(Math.round(hit.spent)) : formatAmount(hit.kind, hit.spent).replace(/ min$/, '');
  return `${prefix}: ${spent} of ${formatAmount(hit.kind, hit.limit)}`;
}

/** The limits after one extension of `kinds`: by the step, or by the original amount again. */
export function extendLimits(
  limits: BudgetLimits,
  kinds: BudgetKind[],
  step: BudgetLimits,
  original: BudgetLimits,
  spent: Partial<Record<BudgetKind, number>> = {},
): BudgetLimits {
  const next = { ...limits };
  for (const kind of kinds) {
    const current = limits[kind];
    if (current === undefined) continue;
    const by = step[kind] ?? original[kind] ?? current;
    // Past the limit already (a call that cost more than what was left): extend from the spend.
    next[kind] = Math.max(current, spent[kind] ?? 0) + by;
  }
  return next;
}

export interface BudgetOptions {
  hub: EventHub;
  approvals: Approvals;
  /** Where spend is counted (the team store's ledger). */
  ledger: SpendLedger;
  roster?: Roster;
  settings?: BudgetSettings;
  now?: () => number;
}

/** Spend and limits of a running team; fed by `usage` events, asked before each model call. */
export class Budget {
  readonly settings: BudgetSettings;
  /** The limits as first set, so "extend" can add the same amount again. */
  readonly #original: BudgetSettings;
  readonly #hub: EventHub;
  readonly #approvals: Approvals;
  readonly #roster: Roster | undefined;
  readonly #ledger: SpendLedger;
  /** The ledger's totals per agent when this Budget started: earlier runs' spend does not count. */
  readonly #baseline: Record<string, Pick<SpendTally, 'cost_usd' | 'model_calls'>>;
  readonly #now: () => number;
  /** When the team, and each agent, started working (its first model call or usage). */
  readonly #teamStartedAt: number;
  readonly #agents = new Map<string, number>();
  readonly #warned = new Set<string>();
  /** Pending "budget stop" questions: request id → scope. */
  readonly #asking = new Map<string, BudgetScope>();
  readonly #exhaustedListeners = new Set<(stop: BudgetStop) => void>();
  readonly #unsubscribe: () => void;
  /** The first hard limit that ended a run with nobody to ask (headless). */
  exhausted: BudgetStop | undefined;
  /** Every hard limit reached, in order. */
  readonly hits: BudgetStop[] = [];

  constructor(options: BudgetOptions) {
    this.#hub = options.hub;
    this.#approvals = options.approvals;
    this.#roster = options.roster;
    this.#ledger = options.ledger;
    this.#baseline = Object.fromEntries(
      Object.entries(options.ledger.data.agents).map(([name, tally]) => [name, { cost_usd: tally.cost_usd, model_calls: tally.model_calls }]),
    );
    this.#now = options.now ?? Date.now;
    this.settings = options.settings ?? emptySettings();
    this.#original = structuredClone(this.settings);
    this.#teamStartedAt = this.#now();
    this.#unsubscribe = options.hub.subscribe((event) => this.#onEvent(event));
  }

  close(): void {
    this.#unsubscribe();
  }

  /** The limits that apply to one agent: its own, else those of "*". */
  limitsFor(agent: string): BudgetLimits {
    return this.settings.agents[agent] ?? this.settings.agents[ANY_AGENT] ?? {};
  }

  /** What the team (or one agent) has spent in this run, from the ledger. */
  spendOf(scope: BudgetScope): Spend {
    const agents = this.#ledger.data.agents;
    if (scope === TEAM_SCOPE) {
      const spend: Spend = { usd: 0, turns: 0, startedAt: this.#teamStartedAt };
      for (const name of Object.keys(agents)) {
        const own = this.#spentBy(name, agents);
        spend.usd += own.usd;
        spend.turns += own.turns;
      }
      return spend;
    }
    return { ...this.#spentBy(scope, agents), startedAt: this.#agent(scope) };
  }

  #spentBy(name: string, agents: Record<string, SpendTally>): { usd: number; turns: number } {
    const now = agents[name];
    const before = this.#baseline[name];
    return { usd: (now?.cost_usd ?? 0) - (before?.cost_usd ?? 0), turns: (now?.model_calls ?? 0) - (before?.model_calls ?? 0) };
  }

  /** Sets one limit of the team or an agent (undefined removes it). */
  set(scope: BudgetScope, kind: BudgetKind, value: number | undefined): void {
    const target = scope === TEAM_SCOPE ? this.settings.team : (this.settings.agents[scope] ??= { ...this.limitsFor(scope) });
    if (value === undefined) delete target[kind];
    else target[kind] = value;
    const original = scope === TEAM_SCOPE ? this.#original.team : (this.#original.agents[scope] ??= {});
    if (value !== undefined) original[kind] = value;
    this.#rearm(scope);
    this.#releaseWaiting();
  }

  /** Extends every limit of `scope` that is reached (or all its limits when none is); returns the new limits. */
  extend(scope: BudgetScope): BudgetLimits {
    const now = this.#now();
    const limits = scope === TEAM_SCOPE ? this.settings.team : this.limitsFor(scope);
    const spend = this.spendOf(scope);
    const reached = checkLimits(scope, spend, limits, now, 0).hard.map((hit) => hit.kind);
    const kinds = reached.length ? reached : (Object.keys(limits) as BudgetKind[]);
    const spent = Object.fromEntries(BUDGET_KINDS.map((kind) => [kind, spentOf(spend, kind, now)]));
    const original = scope === TEAM_SCOPE ? this.#original.team : (this.#original.agents[scope] ?? this.#original.agents[ANY_AGENT] ?? {});
    const next = extendLimits(limits, kinds, this.settings.step, original, spent);
    if (scope === TEAM_SCOPE) this.settings.team = next;
    else this.settings.agents[scope] = next;
    this.#rearm(scope);
    this.#hub.emit(scope === TEAM_SCOPE ? 'huddle' : scope, 'warning', {
      message: `${scope} budget extended: ${describeLimits(next)}`,
      budget: { scope, limits: next },
    });
    this.#releaseWaiting();
    return next;
  }

  /** True when a hard limit of `scope` (`team` or an agent) is reached now. */
  reached(scope: BudgetScope): boolean {
    const limits = scope === TEAM_SCOPE ? this.settings.team : this.limitsFor(scope);
    return checkLimits(scope, this.spendOf(scope), limits, this.#now(), 0).hard.length > 0;
  }

  /** The first hard limit reached for this agent (its own, then the team's); warns once at soft limits. */
  check(agent: string): BudgetHit | undefined {
    const now = this.#now();
    const own = checkLimits(agent, this.spendOf(agent), this.limitsFor(agent), now, this.settings.soft);
    const team = checkLimits(TEAM_SCOPE, this.spendOf(TEAM_SCOPE), this.settings.team, now, this.settings.soft);
    for (const hit of [...own.soft, ...team.soft]) this.#warnOnce(agent, hit);
    return own.hard[0] ?? team.hard[0];
  }

  /**
   * Called before each of the agent's model calls. Resolves undefined to go on, or with why the
   * agent must stop (the person said no, or nobody can answer). Waits, as `waiting`, while asked.
   */
  async gate(agent: string, signal?: AbortSignal): Promise<string | undefined> {
    this.#agent(agent); // its clock starts with its first model call
    for (;;) {
      const hit = this.check(agent);
      if (!hit) return undefined;
      const reason = describeHit(hit);
      const stop: BudgetStop = { ...hit, agent, reason };
      this.hits.push(stop);
      if (!this.#approvals.answerable) {
        this.#hub.emit(agent, 'warning', {
          message: `${agent} stopped: ${reason}`,
          budget: { scope: hit.scope, kind: hit.kind, spent: hit.spent, limit: hit.limit },
        });
        if (!this.exhausted) {
          this.exhausted = stop;
          for (const listener of this.#exhaustedListeners) listener(stop);
        }
        return reason;
      }
      // A status is best effort: the work goes on whether the roster took it or not.
      await this.#roster?.setStatus(agent, 'waiting', { reason }).catch(() => undefined);
      this.#hub.emit(agent, 'warning', {
        message: `${agent} paused: ${reason}; it waits for you to extend the budget or stop it`,
        budget: { scope: hit.scope, kind: hit.kind, spent: hit.spent, limit: hit.limit },
      });
      const step =
        this.settings.step[hit.kind] ?? (hit.scope === TEAM_SCOPE ? this.#original.team[hit.kind] : this.limitsFor(hit.scope)[hit.kind]) ?? hit.limit;
      const asked = this.#approvals.request(
        {
          agent,
          tool: 'budget',
          kind: 'budget',
          summary: hit.scope === TEAM_SCOPE ? reason : `${agent} ${reason}`,
          // No keys here: the pane's question and the needs-you queue each name their own.
          reason: `extending adds ${formatAmount(hit.kind, step)}`,
          prefixes: [],
        },
        signal,
      );
      const id = this.#approvals.list().at(-1)?.id;
      if (id) this.#asking.set(id, hit.scope);
      const outcome = await asked;
      if (id) this.#asking.delete(id);
      if (outcome.kind === 'cancelled') return signal?.aborted ? 'interrupted' : undefined;
      if (outcome.kind !== 'approved') return `stopped at ${reason}`;
      // Several agents may have waited on the same team limit: only the first answer extends it.
      if (this.check(agent)?.scope === hit.scope) this.extend(hit.scope);
      // A status is best effort: the work goes on whether the roster took it or not.
      await this.#roster?.setStatus(agent, 'working').catch(() => undefined);
    }
  }

  /** Resolves when a hard limit ends a run that has nobody to ask. */
  onExhausted(listener: (stop: BudgetStop) => void): () => void {
    this.#exhaustedListeners.add(listener);
    return () => this.#exhaustedListeners.delete(listener);
  }

  /** One line per scope with limits or spend: spend vs limits. */
  describe(agents: string[] = []): string[] {
    const now = this.#now();
    const names = [...new Set([...agents, ...this.#agents.keys(), ...Object.keys(this.#ledger.data.agents).filter((name) => this.spendOf(name).turns > 0)])];
    const line = (scope: string, spend: Spend, limits: BudgetLimits) => {
      const parts = BUDGET_KINDS.map((kind) => {
        const spent = spentOf(spend, kind, now);
        const limit = limits[kind];
        const shown = kind === 'usd' ? `$${spent.toFixed(4)}` : kind === 'turns' ? `${spent} turns` : `${spent.toFixed(1)} min`;
        return limit === undefined ? shown : `${shown} of ${formatAmount(kind, limit)}${spent >= limit ? ' (reached)' : ''}`;
      });
      return `${scope}: ${parts.join(' · ')}`;
    };
    return [line(TEAM_SCOPE, this.spendOf(TEAM_SCOPE), this.settings.team), ...names.map((name) => line(name, this.spendOf(name), this.limitsFor(name)))];
  }

  /** When `name` started working (its clock starts on first sight). */
  #agent(name: string): number {
    let startedAt = this.#agents.get(name);
    if (startedAt === undefined) {
      startedAt = this.#now();
      this.#agents.set(name, startedAt);
    }
    return startedAt;
  }

  /** An agent's clock also starts with its first usage (the spend itself is the ledger's). */
  #onEvent(event: HuddleEvent): void {
    if (event.type === 'usage') this.#agent(event.agent);
  }

  #warnOnce(agent: string, hit: BudgetHit): void {
    const key = `${hit.scope}:${hit.kind}:${hit.limit}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    const whose = hit.scope === TEAM_SCOPE ? 'the team' : agent;
    const message = `${whose} has used ${Math.round((hit.spent / hit.limit) * 100)} % of ${hit.scope === TEAM_SCOPE ? 'its' : 'its'} ${hit.kind} budget (${formatAmount(hit.kind, hit.spent)} of ${formatAmount(hit.kind, hit.limit)})`;
    this.#hub.emit(agent, 'warning', { message, budget: { scope: hit.scope, kind: hit.kind, spent: hit.spent, limit: hit.limit, soft: true } });
  }

  /** New limits warn again when reached. */
  #rearm(scope: BudgetScope): void {
    for (const key of [...this.#warned]) if (key.startsWith(`${scope}:`)) this.#warned.delete(key);
  }

  /** A limit raised elsewhere (/budget): agents waiting on a scope that is no longer over go on. */
  #releaseWaiting(): void {
    for (const [id, scope] of this.#asking) {
      const request = this.#approvals.list().find((r) => r.id === id);
      if (!request) continue;
      const hit = this.check(request.agent);
      if (!hit || hit.scope !== scope) this.#approvals.resolve(id, 'approve', 'budget');
    }
  }
}

export function describeLimits(limits: BudgetLimits): string {
  const parts = BUDGET_KINDS.filter((kind) => limits[kind] !== undefined).map((kind) => formatAmount(kind, limits[kind]!));
  return parts.length ? parts.join(', ') : 'no limits';
}

/** What a headless run prints on stderr when a budget ended it: which limit, and spend per agent. */
export function budgetStopSummary(stop: BudgetStop, agents: Array<{ name: string; costUsd: number; modelCalls: number }>, limits: string[] = []): string {
  const whose = stop.scope === TEAM_SCOPE ? 'the team' : stop.agent;
  const lines = [`huddle: stopped: ${whose} reached its ${stop.kind} budget (${stop.reason}; hit by ${stop.agent})`];
  for (const agent of agents) lines.push(`huddle:   ${agent.name}: $${agent.costUsd.toFixed(4)} in ${agent.modelCalls} model call(s)`);
  const total = agents.reduce((sum, agent) => sum + agent.costUsd, 0);
  lines.push(`huddle:   total: $${total.toFixed(4)}`);
  for (const line of limits) lines.push(`huddle:   budget ${line}`);
  return `${lines.join('\n')}\n`;
}
