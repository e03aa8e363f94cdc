import type { NotificationRepository } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";
import type { LeftChatOutcome } from "../delivery/left-chat.ts";

export interface LeftSendingSweeperOptions {
  notifications: Pick<NotificationRepository, "listChatsLeftSending">;
  /** Takes the chat's lease if it is free and settles and sends what the chat holds. */
  drainChat(chatId: number, signal: AbortSignal): Promise<LeftChatOutcome>;
  logger: Logger;
  /** Messages claimed this recently are passed over: their sends have only just gone out. */
  claimedBeforeMs: number;
  intervalMs: number;
}

/**
 * A notifier killed mid-send leaves its message `sending` and its job active in BullMQ until
 * stall detection hands it back (tens of seconds); if no later message comes for that chat,
 * nothing else would look at it. This sweep, run at start-up and every `intervalMs`, finds such
 * chats in Postgres and drains each whose lease has expired, so a dead sender blocks a chat for
 * about one lease. Returns a function that stops the sweeps (a drain in progress stops between
 * messages).
 */
export function startLeftSendingSweeper(options: LeftSendingSweeperOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "left-sending-sweeper" });
  const stopping = new AbortController();
  const stopSweeps = startPeriodicTask({
    name: "left sending sweep",
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const chatIds = await options.notifications.listChatsLeftSending(options.claimedBeforeMs);
      for (const chatId of chatIds) {
        if (stopping.signal.aborted) return;
        let outcome: LeftChatOutcome;
        try {
          outcome = await options.drainChat(chatId, stopping.signal);
        } catch (err) {
          // Stopping aborts a drain between messages: what is left waits for the next notifier.
          if (stopping.signal.aborted) return;
          throw err;
        }
        if (outcome !== "busy") logger.warn({ chatId, outcome }, "chat left mid-send by a stopped notifier settled");
      }
    },
  });
  return async () => {
    stopping.abort(new Error("notifier stopping"));
    await stopSweeps();
  };
}
