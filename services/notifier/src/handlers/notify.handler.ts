import type { NotificationStatus } from "@ratatoskr/db";
import type { JobContext, JobHandler, SkippedResult } from "@ratatoskr/runtime";
import { PermanentError, RetryLaterError, skipped } from "@ratatoskr/runtime";
import type { BackgroundWork } from "../delivery/background-work.ts";
import type { ChatLocks } from "../delivery/chat-lock.ts";
import { drainChat, type ChatDrainDeps } from "../delivery/chat-drain.ts";
import type { DeliveryOutcome } from "../delivery/deliver-notification.ts";
import type { GiteaStatusHandler } from "../gitea/gitea-status.handler.ts";

export interface NotifyHandlerDeps extends ChatDrainDeps {
  chatLocks: ChatLocks;
  /** How long a job waits before trying a chat whose lease another job holds. */
  busyChatRetryMs: number;
  /** Where a job leaves the release of its chat's lease as it ends. */
  background: BackgroundWork;
  /** Reconciles a Gitea command's status comment (`gitea-status` jobs). */
  giteaStatus?: GiteaStatusHandler;
}

/** What a `message` job reports when it delivered its own notification. */
export interface SentResult {
  status: "sent";
  notificationId: number;
  messageIds: number[];
}

const UNSETTLED: ReadonlySet<string> = new Set<NotificationStatus>(["pending", "sending"]);

/** Spreads retries of jobs waiting for one busy chat, so they do not all wake at once. */
function withJitter(ms: number): number {
  return ms + Math.floor(Math.random() * (ms / 2));
}

/**
 * Where a `message` job's chat comes from: the job (current producers) or, for jobs queued
 * before it carried one, the stored message, which also settles at once a job whose message is
 * already handled or is no Telegram message.
 */
async function chatOf(
  deps: NotifyHandlerDeps,
  notificationId: number,
  chatId: number | undefined,
): Promise<number | SkippedResult> {
  if (chatId !== undefined) return chatId;
  const notification = await deps.notifications.findById(notificationId);
  if (!notification) return skipped(`notification ${notificationId} does not exist`);
  if (notification.channel !== "telegram" || notification.chatId === null) {
    await deps.notifications.markFailed(notificationId, "not a Telegram message: no chat to send to");
    throw new PermanentError(`notification ${notificationId} has no Telegram chat`);
  }
  // `sending` may be a send whose notifier died: the drain settles it under the chat's lease.
  if (notification.status !== "pending" && notification.status !== "sending") {
    return skipped(`notification ${notificationId} is already ${notification.status}`);
  }
  return Number(notification.chatId);
}

/**
 * The `notify` queue's handler. A `message` job delivers one stored notification; it takes the
 * chat's lease and sends every unsettled message of that chat oldest first, so messages arrive
 * in the order they were created whichever job runs first (and a job whose process died is not
 * needed for the chat to go on). Jobs whose message is already handled are skipped; a busy chat
 * or a 429 delays the job without using an attempt.
 */
export function createNotifyHandler(deps: NotifyHandlerDeps): JobHandler<"notify"> {
  const handleMessage = async (
    notificationId: number,
    chatId: number,
    context: JobContext<"notify">,
  ): Promise<unknown> => {
    const { job, logger, signal } = context;
    const log = logger.child({ notificationId });
    const lease = await deps.chatLocks.acquire(chatId, signal);
    if (!lease) {
      // Often a drain already sending this very message: then the job is done, not delayed.
      const now = await deps.notifications.findById(notificationId);
      if (now && !UNSETTLED.has(now.status))
        return skipped(`notification ${notificationId} is already ${now.status}`);
      throw new RetryLaterError(withJitter(deps.busyChatRetryMs), `chat ${chatId} is being sent to`);
    }
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    let outcome: DeliveryOutcome | undefined;
    try {
      outcome = await drainChat(deps, { lease, targetId: notificationId, finalAttempt, signal, logger: log });
    } finally {
      // Freed after the job ends (the drain's results are recorded by now). If Redis is gone the
      // lease simply expires; the drain's own error is the one to report.
      deps.background.add(
        lease.release().catch((err: unknown) => log.warn({ err }, "could not release the chat lease")),
      );
    }

    switch (outcome?.kind) {
      case "sent":
        return { status: "sent", notificationId, messageIds: outcome.messageIds } satisfies SentResult;
      case "dropped":
        return skipped(`notification ${notificationId} dropped: ${outcome.reason}`);
      case "uncertain":
        return skipped(`notification ${notificationId} may have been delivered; recorded as uncertain`);
      case "failed":
        throw new PermanentError(`notification ${notificationId} failed: ${outcome.error}`);
      default: {
        // Another job's drain handled it, or it waits in another chat than the job named.
        const own = await chatOf(deps, notificationId, undefined);
        if (typeof own !== "number") return own;
        if (own === chatId)
          throw new RetryLaterError(
            withJitter(deps.busyChatRetryMs),
            `notification ${notificationId} still waits`,
          );
        log.warn(
          { jobChatId: chatId, chatId: own },
          "notify job named another chat; sending in the message's own",
        );
        return handleMessage(notificationId, own, context);
      }
    }
  };

  return async (data, context) => {
    if (data.kind === "gitea-status") {
      if (!deps.giteaStatus)
        throw new PermanentError(`gitea status comments are off in this notifier (task ${data.taskId})`);
      return deps.giteaStatus(data.taskId);
    }
    const chatId = await chatOf(deps, data.notificationId, data.chatId);
    if (typeof chatId !== "number") return chatId;
    return handleMessage(data.notificationId, chatId, context);
  };
}
