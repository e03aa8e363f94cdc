import type { NotificationRepository } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";

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
 * to look at. Runs now and every `intervalMs`; the returned function stops it and waits for a
 * pass in flight.
 */
export function startStaleSendingSweeper(options: StaleSendingSweeperOptions): () => Promise<void> {
  const log = options.logger.child({ component: "stale-sending-sweeper" });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> = Promise.resolve();
  const tick = () => {
    pass = options.notifications
      .failStaleSending(options.olderThanMs)
      .then((count) => {
        if (count > 0) log.warn({ count }, "messages left mid-send by a stopped notifier marked failed");
      })
      .catch((err: unknown) => log.error({ err }, "stale sending sweep failed"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs);
      });
  };
  timer = setTimeout(tick, 0);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await pass;
  };
}
