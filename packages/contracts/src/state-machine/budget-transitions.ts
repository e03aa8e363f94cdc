import { type BudgetStep } from "../budget.ts";
import { jobRequest, type AnyJobRequest } from "../jobs/job-catalog.ts";
import { followUpJobId } from "../jobs/job-id.ts";
import { QUEUE } from "../queues.ts";
import type { TaskEffect } from "./task-effects.ts";
import type { BudgetEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import type { TelegramStatus } from "./task-status.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

/** A budget stop happens between runs: before the first one (approved) or between rounds. */
const STOPPABLE: ReadonlySet<string> = new Set<TelegramStatus>(["approved", "running"]);

function ok(task: TaskSnapshot, next: Partial<TaskSnapshot>, effects: TaskEffect[]): TransitionResult {
  return { ok: true, task: { ...task, ...next, version: task.version + 1 }, effects };
}

/** The held-back run, enqueued again under a fresh id (the version the resume creates). */
function resumeJob(task: TaskSnapshot, step: BudgetStep): AnyJobRequest {
  const seq = task.version + 1;
  const round = Math.max(1, task.round);
  if (step === "review") {
    return jobRequest(
      QUEUE.review,
      { v: 1, taskId: task.id, kind: "diff", round },
      followUpJobId(task.id, "review", seq),
    );
  }
  return jobRequest(
    QUEUE.dev,
    { v: 1, taskId: task.id, kind: step, round },
    followUpJobId(task.id, "dev", seq),
  );
}

/**
 * P5: a service saw the spend past the budget before a run → `paused` with the spend and the
 * Continue (+budget) / Stop buttons. Each button works once: the second press finds the task no
 * longer paused and is refused ("not-paused").
 */
export function budgetTransition(task: TaskSnapshot, event: BudgetEvent): TransitionResult {
  switch (event.type) {
    case "budget.exceeded":
      if (!STOPPABLE.has(task.status)) return refuse(task, event.type, "illegal");
      return ok(task, { status: "paused", pausedStep: event.step }, [
        {
          type: "notify",
          template: "task.budget-exceeded",
          params: { taskId: task.id, spentUsd: event.spentUsd, budgetUsd: event.budgetUsd },
        },
      ]);
    case "user.budget-extended": {
      if (task.status !== "paused") return refuse(task, event.type, "not-paused");
      const step = task.pausedStep ?? "revise";
      return ok(task, { status: "running", pausedStep: null, budgetUsd: event.budgetUsd }, [
        { type: "enqueue", job: resumeJob(task, step) },
        {
          type: "notify",
          template: "task.budget-extended",
          params: { taskId: task.id, budgetUsd: event.budgetUsd },
        },
      ]);
    }
    case "user.budget-stopped":
      if (task.status !== "paused") return refuse(task, event.type, "not-paused");
      return ok(task, { status: "cancelled", pausedStep: null }, [
        { type: "notify", template: "task.cancelled", params: { taskId: task.id } },
      ]);
  }
}
