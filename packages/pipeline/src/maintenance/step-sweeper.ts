import type { AwaitedFollowUp, FollowUp, FollowUpDispatcher } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";
import { sweepAction } from "./sweep-action.ts";

/** A task Postgres says waits on a job, with the follow-up that asked for it and the task's version then. */
export type AwaitedStep = AwaitedFollowUp;

/**
 * One step a service owns (an analysis, a dev round, a review, a postmortem): which tasks wait
 * on it, where its jobs live, and how a task is settled when its job ended without reporting back.
 */
export interface SweptStep {
  /** For logs: "dev round", "review" … */
  name: string;
  /** The step's tasks that wait on a job, each with its newest follow-up on the step's queue. */
  waiting(): Promise<AwaitedStep[]>;
  /** BullMQ's view of a job: its state, "unknown" when Redis does not hold it. */
  jobState(jobId: string): Promise<string>;
  /**
   * Settles a task whose job ended outside its handler (stalled out, attempts exhausted) with a
   * reason the person sees; false when the task had moved on meanwhile. The job's state is read
   * after the list, so the job may have reported back in between: the release must be one
   * conditional write on what the sweep saw (the task still at `step.taskVersion`), never a
   * fresh read and then a write.
   */
  release(step: AwaitedStep, state: string, logger: Logger): Promise<boolean>;
}

export interface StepSweepDeps {
  dispatcher: Pick<FollowUpDispatcher, "dispatch">;
  logger: Logger;
  /** Follow-ups younger than this are not judged (default 30 s). */
  graceMs?: number;
  now?: () => number;
}

export interface SweepResult {
  requeued: number;
  released: number;
}

/**
 * Postgres is the truth, Redis can be lost (issue 7): every task waiting on `step` is checked
 * against its newest job. A job Redis no longer holds is enqueued again under the same id (the
 * handler's own staleness checks make a duplicate harmless); a job that ended without reporting
 * back settles the task through `step.release`, so a task never waits silently forever.
 */
export async function sweepStep(deps: StepSweepDeps, step: SweptStep): Promise<SweepResult> {
  const graceMs = deps.graceMs ?? 30_000;
  const now = deps.now ?? Date.now;
  const result: SweepResult = { requeued: 0, released: 0 };
  const lost: FollowUp[] = [];
  for (const awaited of await step.waiting()) {
    const { followUp } = awaited;
    const state = await step.jobState(followUp.jobId);
    const action = sweepAction({ dispatched: followUp.dispatchedAt !== null, ageMs: now() - followUp.createdAt.getTime(), state }, graceMs);
    const log = deps.logger.child({ taskId: awaited.taskId, jobId: followUp.jobId, state, step: step.name });
    if (action === "requeue") {
      log.warn(`${step.name} job missing from Redis; enqueued again from Postgres`);
      lost.push(followUp);
    } else if (action === "release") {
      log.warn(`${step.name} job ended without reporting back; the task is settled`);
      if (await step.release(awaited, state, log)) result.released++;
    }
  }
  if (lost.length > 0) result.requeued = (await deps.dispatcher.dispatch(lost)).dispatched;
  return result;
}

/** Runs {@link sweepStep} over `steps` every `intervalMs`; the returned function stops it. */
export function startStepSweeper(deps: StepSweepDeps & { intervalMs: number; name: string }, steps: readonly SweptStep[]): () => Promise<void> {
  const logger = deps.logger.child({ component: deps.name });
  // A failing pass (Redis or Postgres away) is told once, with reminders, and once when over.
  return startPeriodicTask({
    name: deps.name,
    intervalMs: deps.intervalMs,
    logger,
    run: async () => {
      for (const step of steps) await sweepStep({ ...deps, logger }, step);
    },
  });
}
