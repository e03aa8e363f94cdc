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
  const task = await deps.repos.tasks.findById(taskId);
  // Gitea commands have no budget yet; a missing task is the caller's own clear error.
  if (!task || task.source !== "telegram" || task.budgetUsd === null) return { proceed: true };
  const { costUsd } = await deps.repos.traces.tracesSummary(taskId);
  const check = checkBudget(costUsd, task.budgetUsd);
  if (!check.exceeded) return { proceed: true };
  try {
    await deps.transition(taskId, {
      type: "budget.exceeded",
      spentUsd: round(costUsd),
      budgetUsd: check.budgetUsd,
      step,
    });
    return { proceed: false, spentUsd: check.spentUsd, budgetUsd: check.budgetUsd, paused: true };
  } catch (err) {
    // Cancelled or already paused meanwhile: the run must not start either way.
    if (err instanceof IllegalTransitionError) {
      return { proceed: false, spentUsd: check.spentUsd, budgetUsd: check.budgetUsd, paused: false };
    }
    throw err;
  }
}

/** Cents are what the person reads; keep the stored event free of float noise. */
function round(usd: number): number {
  return Math.round(usd * 10_000) / 10_000;
}
