import { jobRequest, notificationJobId, QUEUE, type JobRequest } from "@ratatoskr/contracts";
import type { NotificationRepository } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";

export interface UnqueuedPendingSweeperOptions {
  notifications: Pick<NotificationRepository, "listStalePending">;
  enqueue(request: JobRequest<typeof QUEUE.notify>): Promise<unknown>;
  logger: Logger;
  /** Only messages stored at least this long ago: younger ones are still being queued or paced. */
  olderThanMs: number;
  intervalMs: number;
}

/**
 * A reply stored while Redis was away has no notify job. An untried one at the head of a free
 * chat is sent sooner by the left-behind sweep; this one covers the rest (a message tried once
 * and waiting for a retry whose job was lost). Queuing it under its deterministic id is a no-op
 * for messages that do have one, and the atomic claim keeps a message from going out twice, so
 * this only ever fills gaps.
 */
export function startUnqueuedPendingSweeper(options: UnqueuedPendingSweeperOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "unqueued-pending-sweeper" });
  return startPeriodicTask({
    name: "unqueued pending sweep",
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const ids = await options.notifications.listStalePending(options.olderThanMs);
      for (const notificationId of ids) {
        const data = { v: 1 as const, kind: "message" as const, notificationId };
        await options.enqueue(jobRequest(QUEUE.notify, data, notificationJobId(notificationId)));
      }
      if (ids.length > 0) logger.info({ count: ids.length }, "pending messages without a job queued again");
    },
  });
}
