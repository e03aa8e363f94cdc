import { QUEUE, type JobRequest, type QueueName } from "@ratatoskr/contracts";
import { listAwaitingPostmortem, type PrismaClient, type Repositories } from "@ratatoskr/db";
import { jobEndReason, readJobEnd, type SweptStep } from "@ratatoskr/pipeline";
import type { QueueSet } from "@ratatoskr/runtime";
import { POSTMORTEM_TEMPLATES, sendNotice } from "../notify/postmortem-notice.ts";

/** Failures older than this are not swept again: their postmortem is history. */
const LOOK_BACK_MS = 86_400_000;

export interface PostmortemStepDeps {
  prisma: PrismaClient;
  repos: Pick<Repositories, "notifications" | "tasks">;
  queues: Pick<QueueSet, "queues">;
  enqueue: (request: JobRequest<QueueName>) => Promise<unknown>;
  now?: () => number;
}

/**
 * The postmortem step for the Postgres-driven sweep: a failed or timed-out task whose newest
 * postmortem job has no message after it waits on that job. A lost job is queued again (the
 * handler sends one message per failure); one that gave up sends "postmortem unavailable", so the
 * person never waits on an analysis that will not come — unless the task moved on since the sweep
 * read it (continued, and perhaps failed again: that failure waits on its own postmortem).
 */
export function postmortemStep(deps: PostmortemStepDeps): SweptStep {
  const now = deps.now ?? Date.now;
  return {
    name: "postmortem",
    // Waits unless a postmortem message was stored at or after its newest postmortem job.
    waiting: () => listAwaitingPostmortem(deps.prisma, new Date(now() - LOOK_BACK_MS), POSTMORTEM_TEMPLATES),
    jobState: (jobId) => deps.queues.queues[QUEUE.postmortem].getJobState(jobId),
    async release(step, state, logger) {
      const task = await deps.repos.tasks.findById(step.taskId);
      if (!task) return false;
      // Conditional on what the sweep saw: the task still at the version it read (the same failure,
      // the judged job still its newest) and no postmortem message since that job.
      const sent = await sendNotice(
        { repos: deps.repos, enqueue: deps.enqueue, logger },
        task,
        { template: "task.postmortem-unavailable", params: { taskId: task.id, reason: jobEndReason("postmortem", await readJobEnd(deps.queues.queues[QUEUE.postmortem], step.followUp.jobId, state)) } },
        step.followUp.createdAt,
        step.taskVersion,
      );
      return sent !== null;
    },
  };
}

