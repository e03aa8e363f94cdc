import type { NotificationRepository } from "@ratatoskr/db";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";
import type { LeftChatOutcome } from "../delivery/left-chat.ts";

export interface LeftBehindSweeperOptions {
  notifications: Pick<NotificationRepository, "listChatsLeftBehind">;
  /** Takes the chat's lease if it is free and settles and sends what the chat holds. */
  drainChat(chatId: number, signal: AbortSignal): Promise<LeftChatOutcome>;
  logger: Logger;
  /** Messages claimed this recently are passed over: their sends have only just gone out. */
  claimedBeforeMs: number;
  /** Untried messages stored this recently are passed over: their jobs are on their way. */
  pendingBeforeMs: number;
  intervalMs: number;
}

/**
 * A notifier killed while it held a chat leaves that chat's notify job active in BullMQ until
 * stall detection hands it back (tens of seconds), with the message it was sending `sending` or
 * the one it was about to send still pending; if no later message comes for that chat, nothing
 * else would look at it. This sweep, run at start-up and every `intervalMs`, finds such chats in
 * Postgres and drains each whose lease is free (the lease is what a live job holds while it
 * sends), so a dead notifier holds a chat up for about one lease. The drain takes the lease and
 * claims each message status-guarded, so a job of the same chat never sends one twice. Returns a
 * function that stops the sweeps (a drain in progress stops between messages).
 */
export function startLeftBehindSweeper(options: LeftBehindSweeperOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "left-behind-sweeper" });
  const stopping = new AbortController();
  const { claimedBeforeMs, pendingBeforeMs } = options;
  const stopSweeps = startPeriodicTask({
    name: "left behind sweep",
    intervalMs: options.intervalMs,
    logger,
    run: async () => {
      const chatIds = await options.notifications.listChatsLeftBehind({ claimedBeforeMs, pendingBeforeMs });
      const drained: number[] = [];
      const stopped: number[] = [];
      try {
        for (const chatId of chatIds) {
          if (stopping.signal.aborted) return;
          const outcome = await options.drainChat(chatId, stopping.signal);
          if (outcome === "drained") drained.push(chatId);
          if (outcome === "stopped") stopped.push(chatId);
        }
      } catch (err) {
        // Stopping aborts a drain between messages: what is left waits for the next notifier.
        if (!stopping.signal.aborted) throw err;
      } finally {
        // One line a pass: a queue backlog looks the same from here (old untried messages, free chats).
        if (drained.length + stopped.length > 0)
          logger.info({ drained, stopped }, "chats left behind drained by the sweep");
      }
    },
  });
  return async () => {
    stopping.abort(new Error("notifier stopping"));
    await stopSweeps();
  };
}
