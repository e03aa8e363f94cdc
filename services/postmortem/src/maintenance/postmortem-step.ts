import { QUEUE, type JobRequest, type QueueName } from "@ratatoskr/contracts";
import type { PrismaClient, Repositories } from "@ratatoskr/db";
import type { AwaitedStep, SweptStep } from "@ratatoskr/pipeline";
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
 * person never waits on an analysis that will not come.
 */
export function postmortemStep(deps: PostmortemStepDeps): SweptStep {
  const now = deps.now ?? Date.now;
  return {
    name: "postmortem",
    async waiting() {
      const since = new Date(now() - LOOK_BACK_MS);
      const tasks = await deps.prisma.task.findMany({
        where: { status: { in: ["failed", "timeout"] }, followUps: { some: { queue: QUEUE.postmortem, createdAt: { gte: since } } } },
        select: { id: true, followUps: { where: { queue: QUEUE.postmortem }, orderBy: { id: "desc" }, take: 1 } },
      });
      const waiting: AwaitedStep[] = [];
      for (const task of tasks) {
        const followUp = task.followUps[0];
        if (!followUp) continue;
        const sent = await deps.repos.notifications.findForTaskSince(task.id, POSTMORTEM_TEMPLATES, followUp.createdAt);
        if (!sent) waiting.push({ taskId: task.id, followUp });
      }
      return waiting;
    },
    jobState: (jobId) => deps.queues.queues[QUEUE.postmortem].getJobState(jobId),
    async release(step, _state, logger) {
      const task = await deps.repos.tasks.findById(step.taskId);
      if (!task) return false;
      await sendNotice({ repos: deps.repos, enqueue: deps.enqueue, logger }, task, {
        template: "task.postmortem-unavailable",
        params: { taskId: task.id },
      });
      return true;
    },
  };
}

