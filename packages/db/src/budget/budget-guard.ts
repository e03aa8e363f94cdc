import { IllegalTransitionError, checkBudget, type BudgetStep, type TaskEvent } from "@ratatoskr/contracts";
import type { AgentTraceRepository } from "../repositories/agent-trace.repository.ts";
import type { TaskRepository } from "../repositories/task.repository.ts";

export interface BudgetGuardDeps {
  repos: { tasks: Pick<TaskRepository, "findById">; traces: Pick<AgentTraceRepository, "tracesSummary"> };
  /** ServiceContext.transition (applies and dispatches at once), or repos.applyTransition. */
  transition(taskId: number, event: TaskEvent): Promise<unknown>;
}

export type BudgetVerdict =
  | { proceed: true }
  /** The run must not start: the task is paused by its budget now (or no longer takes runs). */
  | { proceed: false; spentUsd: number; budgetUsd: number; paused: boolean };

/**
 * P5, called by every agent job right before its run (dev: implement / revise / continue;
 * reviewer: review): when the task's spend so far is past its budget, the task pauses and the
 * person gets the spend with Continue (+budget) / Stop; the job must then end without running
 * (return `skipped`). Continue re-enqueues the same step. Postmortems are never stopped.
 *
 *   const budget = await stopIfOverBudget(ctx, taskId, "revise");
 *   if (!budget.proceed) return skipped(`task ${taskId} paused by its budget`);
 */
export async function stopIfOverBudget(
  deps: BudgetGuardDeps,
  taskId: number,
  step: BudgetStep,
): Promise<BudgetVerdict> {
  const passed = await budgetPassed(deps.repos, taskId);
  if (!passed) return { proceed: true };
  try {
    await deps.transition(taskId, { type: "budget.exceeded", ...passed, step });
    return { proceed: false, ...passed, paused: true };
  } catch (err) {
    // Cancelled or already paused meanwhile: the run must not start either way.
    if (err instanceof IllegalTransitionError) {
      return { proceed: false, ...passed, paused: false };
    }
    throw err;
  }
}

/**
 * The task's spend and budget when the spend so far is past the budget, else undefined. A step
 * that just spent (a dev round) asks before it reports, so the next one waits for the person.
 */
export async function budgetPassed(
  repos: BudgetGuardDeps["repos"],
  taskId: number,
): Promise<{ spentUsd: number; budgetUsd: number } | undefined> {
  const task = await repos.tasks.findById(taskId);
  // A missing task is the caller's own clear error.
  if (!task || task.budgetUsd === null) return undefined;
  const { costUsd } = await repos.traces.tracesSummary(taskId);
  const check = checkBudget(costUsd, task.budgetUsd);
  return check.exceeded ? { spentUsd: round(costUsd), budgetUsd: check.budgetUsd } : undefined;
}

/**
 * The task's budget and what its finished runs spent, for a run to watch its live spend against
 * (see `runWhileTaskRuns`); undefined when the task has no budget.
 */
export async function budgetStanding(
  repos: BudgetGuardDeps["repos"],
  taskId: number,
): Promise<{ spentUsd: number; budgetUsd: number } | undefined> {
  const task = await repos.tasks.findById(taskId);
  if (!task || task.budgetUsd === null) return undefined;
  const { costUsd } = await repos.traces.tracesSummary(taskId);
  return { spentUsd: costUsd, budgetUsd: task.budgetUsd };
}

/** Cents are what the person reads; keep the stored event free of float noise. */
function round(usd: number): number {
  return Math.round(usd * 10_000) / 10_000;
}
