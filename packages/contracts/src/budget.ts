/**
 * The per-task budget (P5): agent runs stop once a task has spent more than it may. Pure
 * arithmetic shared by the services that run agents (the check before each run) and ingress
 * (the Continue (+budget) button).
 */

/** The run a budget stop held back, resumed as it was when the person presses Continue. */
export const BUDGET_STEPS = ["implement", "revise", "continue", "fix", "review"] as const;
export type BudgetStep = (typeof BUDGET_STEPS)[number];

export type BudgetCheck =
  | { exceeded: false }
  /** Apply `{ type: "budget.exceeded", spentUsd, budgetUsd, step }` and do not start the run. */
  | { exceeded: true; spentUsd: number; budgetUsd: number };

/**
 * Whether the next agent run of a task may start. `spentUsd` is the task's total so far (the sum
 * of its traces' cost); `budgetUsd` its budget, null or undefined = no budget. Past means strictly
 * more than the budget: a run that lands exactly on it still lets the next one start.
 */
export function checkBudget(spentUsd: number, budgetUsd: number | null | undefined): BudgetCheck {
  if (budgetUsd === null || budgetUsd === undefined) return { exceeded: false };
  if (!(spentUsd > budgetUsd)) return { exceeded: false };
  return { exceeded: true, spentUsd, budgetUsd };
}

/**
 * The budget after Continue (+budget): what is already spent plus one more configured budget,
 * so the next runs get a full budget's worth however far the last run overshot.
 */
export function extendedBudgetUsd(spentUsd: number, configuredBudgetUsd: number): number {
  // Cents, so a float sum never shows as $1.2000000000000002.
  return Math.round((Math.max(0, spentUsd) + configuredBudgetUsd) * 100) / 100;
}
