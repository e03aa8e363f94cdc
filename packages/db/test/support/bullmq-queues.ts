import { JOB_CATALOG, QUEUE_NAMES, type AnyJobRequest, type QueueName } from "@ratatoskr/contracts";
import { Queue } from "bullmq";
import { Redis } from "ioredis";

export interface TestQueues {
  queues: Record<QueueName, Queue>;
  /** What a producer does: add with the deterministic id, so a repeat is a no-op. */
  enqueue(request: AnyJobRequest): Promise<void>;
  /** Waiting job ids of a queue (a duplicate would show up twice). */
  waitingIds(queue: QueueName): Promise<string[]>;
  close(): Promise<void>;
}

export function createTestQueues(url: string, prefix: string): TestQueues {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queues = Object.fromEntries(
    QUEUE_NAMES.map((name) => [name, new Queue(name, { connection, prefix })]),
  ) as Record<QueueName, Queue>;
  return {
    queues,
    enqueue: async (request) => {
      await queues[request.queue].add(JOB_CATALOG[request.queue].jobName, request.data, {
        jobId: request.jobId,
      });
    },
    waitingIds: async (queue) => (await queues[queue].getWaiting(0, -1)).map((job) => job.id ?? ""),
    close: async () => {
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
      connection.disconnect();
    },
  };
}
