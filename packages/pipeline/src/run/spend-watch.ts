/** A task's budget as a run starts: what it may spend in all, and what its finished runs spent. */
export interface RunBudget {
  budgetUsd: number;
  spentUsd: number;
}

export interface SpendWatch {
  /** Aborted once the run's live spend takes the task past its budget. */
  readonly signal: AbortSignal;
  /** Told the run's spend so far at each progress sample. */
  observe(live: { costUsd: number }): void;
  /** The task's spend and budget when the run was stopped for it, else undefined. */
  exceeded(): RunBudget | undefined;
}

/**
 * P5 during a run: the check before a run cannot stop one long run from spending without bound,
 * so the run's live spend (sampled from its session) is added to what the task spent before and
 * the run is stopped the moment the sum passes the budget.
 */
export function watchSpend(budget: RunBudget): SpendWatch {
  const stop = new AbortController();
  let passed: RunBudget | undefined;
  return {
    signal: stop.signal,
    observe(live) {
      const spentUsd = budget.spentUsd + live.costUsd;
      if (passed || !(spentUsd > budget.budgetUsd)) return;
      passed = { spentUsd: Math.round(spentUsd * 10_000) / 10_000, budgetUsd: budget.budgetUsd };
      stop.abort(new Error(`the task's spend passed its budget of $${budget.budgetUsd}`));
    },
    exceeded: () => passed,
  };
}
