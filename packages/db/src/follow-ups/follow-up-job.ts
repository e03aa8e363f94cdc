import { parseJobData, QUEUE_NAMES, type AnyJobRequest, type QueueName } from "@ratatoskr/contracts";
import type { FollowUp } from "../../generated/client.ts";

function isQueueName(queue: string): queue is QueueName {
  return (QUEUE_NAMES as readonly string[]).includes(queue);
}

/** The job an outbox row stands for, re-validated against its consumer's schema. */
export function toJobRequest(row: Pick<FollowUp, "queue" | "jobId" | "data">): AnyJobRequest {
  if (!isQueueName(row.queue)) throw new Error(`follow-up ${row.jobId} names unknown queue "${row.queue}"`);
  return { queue: row.queue, data: parseJobData(row.queue, row.data), jobId: row.jobId } as AnyJobRequest;
}
