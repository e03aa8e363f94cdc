import type { Notification, NotificationRepository, TaskRepository } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";
import type { MessageChannel } from "../channels/message-channel.ts";
import type { Locale } from "../i18n/index.ts";
import { prepareMessage, type PreparedMessage } from "../rendering/prepare-message.ts";
import { classifySendFailure } from "./send-failure.ts";

export interface DeliveryDeps {
  notifications: NotificationRepository;
  tasks: Pick<TaskRepository, "findById">;
  channel: MessageChannel;
  defaultLocale: Locale;
}

/** What became of one notification; the chat drain decides from it whether to go on. */
export type DeliveryOutcome =
  | { kind: "sent"; messageIds: number[] }
  /** Another sender claimed it first, or it was no longer pending. */
  | { kind: "not-claimed" }
  | { kind: "dropped"; reason: string }
  | { kind: "failed"; error: string }
  /** Back to pending (with the parts already sent): the chat must wait `waitMs`. */
  | { kind: "retry-after"; waitMs: number; error: string }
  /** Back to pending (with the parts already sent): retry with backoff. */
  | { kind: "transient"; error: string };

export interface DeliverOptions {
  /** On the job's last attempt a transient failure is final: the message is failed, not released. */
  finalAttempt: boolean;
  logger: Logger;
}

export type RenderedMessage = Extract<PreparedMessage, { ok: true }>;

function notificationLogger(logger: Logger, notification: Notification): Logger {
  return logger.child({
    notificationId: notification.id,
    taskId: notification.taskId ?? undefined,
    template: notification.template,
  });
}

/** Renders a stored notification with its task's current facts; nothing is claimed or sent. */
export async function renderNotification(
  deps: DeliveryDeps,
  notification: Notification,
): Promise<PreparedMessage> {
  const task = notification.taskId === null ? null : await deps.tasks.findById(notification.taskId);
  return prepareMessage(notification, task, deps.defaultLocale);
}

/** A notification that cannot be rendered is wrong as stored: retrying cannot fix it. */
export async function failUnrenderable(
  deps: DeliveryDeps,
  notification: Notification,
  problem: string,
  logger: Logger,
): Promise<DeliveryOutcome> {
  await deps.notifications.markFailed(notification.id, problem);
  notificationLogger(logger, notification).error({ problem }, "notification cannot be rendered; failed");
  return { kind: "failed", error: problem };
}

/**
 * Claims one rendered notification (pending → sending, atomically), sends it and records the
 * result. Once claimed it is never sent again unless a failure proves where the send stopped; a
 * process that dies in between leaves it `sending`, which nobody resends.
 */
export async function deliverNotification(
  deps: DeliveryDeps,
  notification: Notification,
  message: RenderedMessage,
  { finalAttempt, logger }: DeliverOptions,
): Promise<DeliveryOutcome> {
  const claimed = await deps.notifications.claim(notification.id);
  if (!claimed) return { kind: "not-claimed" };
  const { id, chatId } = claimed;
  const log = notificationLogger(logger, claimed);

  // Logged before the send: if this process dies now, the log shows which message was in flight.
  log.info({ chatId: Number(chatId), partsSent: claimed.sentMessageIds.length }, "sending notification");
  let messageIds: number[];
  try {
    messageIds = await deps.channel.send(Number(chatId), message.html, {
      ...(message.replyMarkup ? { replyMarkup: message.replyMarkup } : {}),
      alreadySent: claimed.sentMessageIds.map(Number),
    });
  } catch (err) {
    const failure = classifySendFailure(err);
    switch (failure.kind) {
      case "retry-after":
        await deps.notifications.release(id, failure.message, failure.sentMessageIds);
        log.warn(
          { waitMs: failure.waitMs, partsSent: failure.sentMessageIds.length },
          "Telegram asked to wait",
        );
        return { kind: "retry-after", waitMs: failure.waitMs, error: failure.message };
      case "unreachable":
        await deps.notifications.markDropped(id, failure.message);
        log.warn({ reason: failure.reason }, "chat cannot receive messages; notification dropped");
        return { kind: "dropped", reason: failure.message };
      case "rejected":
        await deps.notifications.markFailed(id, failure.message);
        log.error({ reason: failure.reason }, "Telegram rejected the message; notification failed");
        return { kind: "failed", error: failure.message };
      case "transient":
        if (finalAttempt) {
          await deps.notifications.markFailed(id, `gave up after the last attempt: ${failure.message}`);
          log.error({ err: failure.message }, "send failed on the last attempt; notification failed");
          return { kind: "failed", error: failure.message };
        }
        await deps.notifications.release(id, failure.message, failure.sentMessageIds);
        log.warn({ err: failure.message }, "send failed; will retry");
        return { kind: "transient", error: failure.message };
    }
  }
  await deps.notifications.markSent(id, messageIds);
  log.info({ chatId: Number(chatId), parts: messageIds.length, locale: message.locale }, "notification sent");
  return { kind: "sent", messageIds };
}
