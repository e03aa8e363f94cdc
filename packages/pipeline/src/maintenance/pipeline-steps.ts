import { doorTexts, type QUEUE, type TaskSource } from "@ratatoskr/contracts";
import { listAwaitingDevOrReview, type PrismaClient } from "@ratatoskr/db";
import { envDurationMs, type QueueSet } from "@ratatoskr/runtime";
import { reportUnlessMovedOn, type TransitionFn } from "../run/step-job.ts";
import { jobEndReason, readJobEnd, type JobEnd } from "./job-end.ts";
import type { SweptStep } from "./step-sweeper.ts";

/** The sweep's variables, shared by the dev, reviewer and postmortem services. */
export const STEP_SWEEP_CONFIG_SCHEMA = {
  intervalMs: envDurationMs("PIPELINE_SWEEP_INTERVAL_MS", {
    default: 10_000,
    description: "How often tasks waiting on a job (dev, review, postmortem; a Gitea command's authorization, publishing and turn in its line) are checked against BullMQ (Redis lost, stalled out)",
  }),
  graceMs: envDurationMs("PIPELINE_SWEEP_GRACE_MS", {
    default: 30_000,
    description: "A job (or a command's turn) younger than this is not judged missing or dead by the sweep",
  }),
};

/** A step of a task that runs: a dev round, a review, or a command's planner (the analyst queue). */
type StepQueue = typeof QUEUE.dev | typeof QUEUE.review | typeof QUEUE.analyst;

export interface RunningStepDeps {
  prisma: PrismaClient;
  queues: Pick<QueueSet, "queues">;
  transition: TransitionFn;
}

const STEP_NAMES: Record<StepQueue, string> = { dev: "dev round", review: "review", analyst: "planner" };

/** What the person reads when the step's job ended outside its handler: how it really ended. */
export function lostStepReason(queue: StepQueue, end: JobEnd, task: { id: number; source: TaskSource }): string {
  return `${jobEndReason(STEP_NAMES[queue], end)}; ${doorTexts(task.source).retry(task.id)}`;
}

/**
 * A dev round or a review of a task of any door as the sweep sees it: the task is `approved` or
 * `running` and its newest dev-or-review follow-up is on `queue`. A job that ended without
 * reporting back fails the task with the reason, which the person reads (and a postmortem follows).
 */
export function runningStep(deps: RunningStepDeps, queue: StepQueue): SweptStep {
  return {
    name: STEP_NAMES[queue],
    async waiting() {
      return (await listAwaitingDevOrReview(deps.prisma)).filter((awaited) => awaited.followUp.queue === queue);
    },
    jobState: (jobId) => deps.queues.queues[queue].getJobState(jobId),
    async release(step, state, logger) {
      const reason = lostStepReason(queue, await readJobEnd(deps.queues.queues[queue], step.followUp.jobId, state), { id: step.taskId, source: step.source });
      return reportUnlessMovedOn(
        () => deps.transition(step.taskId, { type: "run.failed", reason }, { expectVersion: step.taskVersion }),
        logger,
        "the task moved on before the sweep settled it",
      );
    },
  };
}
