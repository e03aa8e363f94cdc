import { QUEUE_NAMES, type AnyJobRequest, type QueueName } from "@ratatoskr/contracts";
import type { FollowUp } from "../../generated/client.ts";

function isQueueName(queue: string): queue is QueueName {
  return (QUEUE_NAMES as readonly string[]).includes(queue);
}

/**
 * The job an outbox row stands for. Not re-validated here: the queue's enqueue checks the payload
 * against its consumer's schema, once, and a row that fails it stays for the reconciler.
 */
export function toJobRequest(row: Pick<FollowUp, "queue" | "jobId" | "data">): AnyJobRequest {
  if (!isQueueName(row.queue)) throw new Error(`follow-up ${row.jobId} names unknown queue "${row.queue}"`);
  return { queue: row.queue, data: row.data, jobId: row.jobId } as AnyJobRequest;
}
