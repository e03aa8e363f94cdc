import { IllegalTransitionError, type BudgetStep, type TaskEvent } from "@ratatoskr/contracts";
import {
  stopIfOverBudget,
  type AppliedTransition,
  type ApplyTransitionOptions,
  type BudgetGuardDeps,
  type Repositories,
  type Task,
} from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";
import { isStepSettled } from "./step-events.ts";

/** Applies a state-machine event and dispatches its follow-ups (service-host's ServiceContext.transition). */
export type TransitionFn = (taskId: number, event: TaskEvent, options?: ApplyTransitionOptions) => Promise<AppliedTransition>;

type StoredEvents = Awaited<ReturnType<Repositories["events"]["list"]>>;

export interface StepTaskRule {
  /** For the skip reason: `dev job`, `review`, `planner job`. */
  step: string;
  /** The events that settle the step: once one is applied after the job was queued, a rerun is stale. */
  settledBy: readonly string[];
  /** The statuses the job may run in (default: running). */
  statuses?: readonly string[];
  /** The job's round, which must be the task's; undefined: not compared. */
  round?: number | undefined;
}

/**
 * What an agent step job reads before anything else: its task and the task's events, or why the
 * job has nothing to do (the task is gone, has moved on to another status or round, or this job
 * already reported back and runs again only because its worker died after the report).
 */
export async function loadStepTask(
  repos: { tasks: Pick<Repositories["tasks"], "findById">; events: Pick<Repositories["events"], "list"> },
  taskId: number,
  jobId: string | undefined,
  rule: StepTaskRule,
): Promise<{ task: Task; events: StoredEvents } | { skip: string }> {
  const task = await repos.tasks.findById(taskId);
  if (!task) return { skip: `task ${taskId} does not exist` };
  if (!(rule.statuses ?? ["running"]).includes(task.status)) return { skip: `task ${task.id} is ${task.status}` };
  if (rule.round !== undefined && task.round !== rule.round) {
    return { skip: `task ${task.id} is in round ${task.round}, not ${rule.round}` };
  }
  const events = await repos.events.list(task.id);
  if (isStepSettled(jobId, task.id, events, rule.settledBy)) return { skip: `${rule.step} ${jobId} already reported back` };
  return { task, events };
}

/** P5 before a run: why the job must end without running (the task is paused by its budget now), or undefined. */
export async function overBudgetRefusal(deps: BudgetGuardDeps, taskId: number, step: BudgetStep): Promise<string | undefined> {
  const budget = await stopIfOverBudget(deps, taskId, step);
  return budget.proceed ? undefined : `task ${taskId} stopped by its budget ($${budget.spentUsd} of $${budget.budgetUsd})`;
}

/** On a job's last attempt a retryable failure must settle the task instead, or it stays waiting. */
export function isLastAttempt(job: { attemptsMade: number; opts: { attempts?: number | undefined } }): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Applies a job's report to its task; false when the task moved on meanwhile (e.g. cancelled) and
 * the state machine refused it: the report is dropped and `droppedLog` says so.
 */
export async function reportUnlessMovedOn(apply: () => Promise<unknown>, logger: Logger, droppedLog: string): Promise<boolean> {
  try {
    await apply();
    return true;
  } catch (err) {
    if (!(err instanceof IllegalTransitionError)) throw err;
    logger.info({ refusal: err.refusal }, droppedLog);
    return false;
  }
}
