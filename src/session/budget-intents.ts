// /budget as intents: spend vs limits, set a limit of the team or an agent, extend a reached one.
// The limits live in the running team's Budget (runtime/budget); this is what a face may do with them.
import { describeLimits, parseLimit, TEAM_SCOPE, type Budget } from '../runtime/budget/budget.js';

export { BUDGET_KINDS, TEAM_SCOPE } from '../runtime/budget/budget.js';

export class BudgetIntents {
  readonly #budget: Budget;

  constructor(budget: Budget) {
    this.#budget = budget;
  }

  /** One line per scope (the team, then `agents` and whoever has spent): spend vs limits. */
  describe(agents: string[]): string[] {
    return this.#budget.describe(agents);
  }

  /** True when a hard limit of `scope` (`team` or an agent) is reached now. */
  reached(scope: string): boolean {
    return this.#budget.reached(scope);
  }

  /**
   * Sets (or with `off` removes) one limit: `kind` is usd, minutes or turns; `amount` a number
   * ("$5" too). Returns the scope's limits now; a bad kind or amount throws a BudgetConfigError
   * whose message says what is wrong.
   */
  set(scope: string, kind: string, amount: string): string {
    if (amount === 'off') {
      const { kind: checked } = parseLimit(kind, '1'); // checks the kind
      this.#budget.set(scope, checked, undefined);
      return `${scope}: no ${kind} limit`;
    }
    const limit = parseLimit(kind, amount.replace(/^\$/, ''));
    this.#budget.set(scope, limit.kind, limit.value);
    const limits = scope === TEAM_SCOPE ? this.#budget.settings.team : this.#budget.limitsFor(scope);
    return `${scope} budget: ${describeLimits(limits)}`;
  }

  /** Extends each of `scopes` once; returns their new limits, `scope: limits` each. */
  extend(scopes: string[]): string[] {
    return scopes.map((scope) => `${scope}: ${describeLimits(this.#budget.extend(scope))}`);
  }
}
