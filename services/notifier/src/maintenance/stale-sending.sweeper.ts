import type { NotificationRepository } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";

export interface StaleSendingSweeperOptions {
  notifications: Pick<NotificationRepository, "settleStaleSending">;
  logger: Logger;
  /** Only messages claimed at least this long ago: younger ones may still be on their way. */
  olderThanMs: number;
  intervalMs: number;
  /** Counts the messages settled as uncertain. */
  onSettled?: (count: number) => void;
}

/**
 * Last resort for a message a stopped notifier left `sending` that no drain of its chat settled
 * (its job and every later one gone): whether it reached the chat is unknown and resending could
 * duplicate it, so after a while it is recorded as `uncertain`. Returns a function that stops the
 * sweeps.
 */
export function startStaleSendingSweeper(options: StaleSendingSweeperOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "stale-sending-sweeper" });
  return startPeriodicTask({
    name: "stale sending sweep",
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const count = await options.notifications.settleStaleSending(options.olderThanMs);
      if (count > 0) {
        options.onSettled?.(count);
        logger.warn({ count }, "messages left mid-send by a stopped notifier recorded as uncertain");
      }
    },
  });
}
