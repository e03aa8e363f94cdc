import { jobRequest } from "../jobs/job-catalog.ts";
import { followUpJobId } from "../jobs/job-id.ts";
import { QUEUE } from "../queues.ts";
import type { TaskEffect } from "./task-effects.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";

/**
 * The postmortem (P6) of a task that just failed or timed out, on every door: one job per
 * failure, named by the version the failure makes, so a task failed twice gets two.
 */
export function postmortemJob(task: TaskSnapshot, cause: "failed" | "timeout"): TaskEffect {
  const jobId = followUpJobId(task.id, "postmortem", task.version + 1);
  return { type: "enqueue", job: jobRequest(QUEUE.postmortem, { v: 1, taskId: task.id, cause }, jobId) };
}
