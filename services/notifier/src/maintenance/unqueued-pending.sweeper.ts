import type { QUEUE} from "@ratatoskr/contracts";
import { notifyMessagesJobs, type JobRequest } from "@ratatoskr/contracts";
import type { NotificationRepository } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";

export interface UnqueuedPendingSweeperOptions {
  notifications: Pick<NotificationRepository, "listStalePending">;
  /** Queues the jobs in one round trip (one v2 job per pack of messages). */
  enqueueBulk(requests: readonly JobRequest<typeof QUEUE.notify>[]): Promise<unknown>;
  logger: Logger;
  /** Only messages stored at least this long ago: younger ones are still being queued or paced. */
  olderThanMs: number;
  intervalMs: number;
}

/**
 * A reply stored while Redis was away has no notify job. An untried one at the head of a free
 * chat is sent sooner by the left-behind sweep; this one covers the rest (a message tried once
 * and waiting for a retry whose job was lost), packed several to a job. Queuing a pack under its
 * id (from its messages) is a no-op while the same pack is queued, and the atomic claim keeps a
 * message from going out twice (one that does have a job is skipped by the second), so
 * this only ever fills gaps. It writes no row itself: a message sent between its read and its
 * enqueue gets a job that finds it settled and skips it (the claim is the conditional write).
 */
export function startUnqueuedPendingSweeper(options: UnqueuedPendingSweeperOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "unqueued-pending-sweeper" });
  return startPeriodicTask({
    name: "unqueued pending sweep",
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const stale = await options.notifications.listStalePending(options.olderThanMs);
      if (stale.length === 0) return;
      await options.enqueueBulk(notifyMessagesJobs(stale.map((m) => ({ notificationId: m.id, chatId: m.chatId }))));
      logger.info({ count: stale.length }, "pending messages without a job queued again");
    },
  });
}
