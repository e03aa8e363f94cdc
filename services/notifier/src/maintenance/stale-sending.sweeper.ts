import type { QUEUE} from "@ratatoskr/contracts";
import { notifyMessagesJobs, type JobRequest } from "@ratatoskr/contracts";
import type { NotificationRepository } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";
import { DROPPABLE_TEMPLATES } from "../delivery/must-deliver.ts";

export interface StaleSendingSweeperOptions {
  notifications: Pick<NotificationRepository, "settleStaleSending">;
  /** Queues the jobs in one round trip (one v2 job per pack of messages). */
  enqueueBulk(requests: readonly JobRequest<typeof QUEUE.notify>[]): Promise<unknown>;
  logger: Logger;
  /** Only messages claimed at least this long ago: younger ones may still be on their way. */
  olderThanMs: number;
  intervalMs: number;
  /** Counts what it settled: `resend` (must-deliver, put back to be sent marked) or `uncertain`. */
  onSettled?: (settled: "resend" | "uncertain", count: number) => void;
}

/**
 * Last resort for a message a stopped notifier left `sending` that no drain of its chat settled
 * (its job and every later one gone): whether it reached the chat is unknown. One conditional
 * write settles every such row still claimed as it was (a send that finishes meanwhile is left
 * as recorded): a must-deliver message goes back to pending and is queued again (once: it is put
 * back only if it was never resent), to be sent once more marked
 * "(resent)"; an acknowledgement, or a message already resent, is recorded `uncertain`.
 * Returns a function that stops the sweeps.
 */
export function startStaleSendingSweeper(options: StaleSendingSweeperOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "stale-sending-sweeper" });
  return startPeriodicTask({
    name: "stale sending sweep",
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const { resend, uncertain } = await options.notifications.settleStaleSending(
        options.olderThanMs,
        DROPPABLE_TEMPLATES,
      );
      if (resend.length > 0)
        await options.enqueueBulk(notifyMessagesJobs(resend.map(({ id, chatId }) => ({ notificationId: id, chatId }))));
      if (uncertain > 0) {
        options.onSettled?.("uncertain", uncertain);
        logger.warn({ count: uncertain }, "messages left mid-send by a stopped notifier recorded as uncertain");
      }
      if (resend.length > 0) {
        options.onSettled?.("resend", resend.length);
        logger.warn(
          { count: resend.length },
          "must-deliver messages left mid-send by a stopped notifier queued to be sent once more, marked (resent)",
        );
      }
    },
  });
}
