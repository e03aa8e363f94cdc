import type { NotificationRepository } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";

export interface StaleSendingSweeperOptions {
  notifications: Pick<NotificationRepository, "failStaleSending">;
  logger: Logger;
  /** Only messages claimed at least this long ago: younger ones may still be on their way. */
  olderThanMs: number;
  intervalMs: number;
}

/**
 * A notifier that stopped mid-send leaves its message `sending`. Whether it reached the chat is
 * unknown and resending could duplicate it, so after a while it is marked `failed` for a person
 * to look at. Returns a function that stops the sweeps.
 */
export function startStaleSendingSweeper(options: StaleSendingSweeperOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "stale-sending-sweeper" });
  return startPeriodicTask({
    name: "stale sending sweep",
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const count = await options.notifications.failStaleSending(options.olderThanMs);
      if (count > 0) logger.warn({ count }, "messages left mid-send by a stopped notifier marked failed");
    },
  });
}
