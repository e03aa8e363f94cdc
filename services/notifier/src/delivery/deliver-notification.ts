import type { Notification, NotificationRepository, TaskRepository, UncertainOutcome } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";
import type { MessageChannel } from "../channels/message-channel.ts";
import type { Locale } from "../i18n/index.ts";
import { prepareMessage, type PreparedMessage } from "../rendering/prepare-message.ts";
import { isMustDeliver, resentLeadIn } from "./must-deliver.ts";
import { classifySendFailure } from "./send-failure.ts";

/** Why a send's effect is unknown: its answer was lost, or its sender died before recording it. */
export type DoubtCause = "answer-lost" | "sender-died";

export interface DeliveryDeps {
  notifications: NotificationRepository;
  tasks: Pick<TaskRepository, "findById">;
  channel: MessageChannel;
  defaultLocale: Locale;
  /** Counts doubtful sends: `resend` (must-deliver, sent again marked) or `uncertain` (not resent). */
  onDoubt?: (settled: UncertainOutcome, cause: DoubtCause) => void;
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
  | { kind: "transient"; error: string }
  /** It may have reached the chat: back to pending to be sent once more, marked "(resent)". */
  | { kind: "resend"; error: string }
  /** It may have reached the chat: settled `uncertain`, never resent. */
  | { kind: "uncertain"; error: string };

export interface DeliverOptions {
  /** On the job's last attempt a transient failure is final: the message is failed, not released. */
  finalAttempt: boolean;
  logger: Logger;
  /** Aborts the Bot API call in flight (the chat lease was lost). */
  signal?: AbortSignal;
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
 * A send whose effect is unknown: a must-deliver message goes back to pending to be sent once
 * more, marked "(resent)" (on the job's last attempt too: the drain sends it at once); any other,
 * or one already resent, settles `uncertain`.
 */
export async function settleDoubt(
  deps: DeliveryDeps,
  notification: Notification,
  error: string,
  cause: DoubtCause,
  logger: Logger,
  sentMessageIds?: readonly number[],
): Promise<DeliveryOutcome> {
  const log = notificationLogger(logger, notification);
  // Settled only while it is still the claim seen (a send that finished meanwhile stays as it recorded).
  const settled = await deps.notifications.markUncertain(
    notification,
    error,
    isMustDeliver(notification.template),
    sentMessageIds,
  );
  if (settled === null) return { kind: "not-claimed" };
  deps.onDoubt?.(settled, cause);
  if (settled === "resend") {
    log.warn({ cause, err: error }, "send may have reached the chat; a must-deliver message, sent once more marked (resent)");
    return { kind: "resend", error };
  }
  log.warn({ cause, err: error }, "send may have reached the chat; recorded as uncertain, not resent");
  return { kind: "uncertain", error };
}

/**
 * Sends one rendered notification already claimed (pending → sending: the send record, written
 * before the request goes out) and records the result. A failure that proves nothing arrived is
 * retried; one that may have arrived (timeout, reset) is never blindly resent (see
 * `settleDoubt`); a process that dies in between leaves it `sending`, which the chat's next lease
 * holder settles the same way.
 */
export async function deliverClaimed(
  deps: DeliveryDeps,
  claimed: Notification,
  message: RenderedMessage,
  { finalAttempt, logger, signal }: DeliverOptions,
): Promise<DeliveryOutcome> {
  const { id, chatId } = claimed;
  // Built on first use: at warn a send that goes well pays nothing for its log lines.
  let cached: Logger | undefined;
  const log = () => (cached ??= notificationLogger(logger, claimed));
  const infoOn = logger.isLevelEnabled("info");

  // Logged before the send: if this process dies now, the log shows which message was in flight.
  if (infoOn) log().info({ chatId: Number(chatId), partsSent: claimed.sentMessageIds.length }, "sending notification");
  let messageIds: number[];
  try {
    messageIds = await deps.channel.send(Number(chatId), message.html, {
      ...(message.replyMarkup ? { replyMarkup: message.replyMarkup } : {}),
      ...(claimed.uncertainAt ? { leadIn: resentLeadIn(message.locale) } : {}),
      ...(signal ? { signal } : {}),
      ...(claimed.threadId !== null ? { threadId: claimed.threadId } : {}),
      alreadySent: claimed.sentMessageIds.map(Number),
    });
  } catch (err) {
    const failure = classifySendFailure(err);
    switch (failure.kind) {
      case "retry-after":
        await deps.notifications.release(id, failure.message, failure.sentMessageIds);
        log().warn(
          { waitMs: failure.waitMs, partsSent: failure.sentMessageIds.length },
          "Telegram asked to wait",
        );
        return { kind: "retry-after", waitMs: failure.waitMs, error: failure.message };
      case "unreachable":
        await deps.notifications.markDropped(id, failure.message);
        log().warn({ reason: failure.reason }, "chat cannot receive messages; notification dropped");
        return { kind: "dropped", reason: failure.message };
      case "rejected":
        await deps.notifications.markFailed(id, failure.message);
        log().error({ reason: failure.reason }, "Telegram rejected the message; notification failed");
        return { kind: "failed", error: failure.message };
      case "in-doubt":
        return settleDoubt(deps, claimed, failure.message, "answer-lost", logger, failure.sentMessageIds);
      case "transient":
        if (finalAttempt) {
          await deps.notifications.markFailed(id, `gave up after the last attempt: ${failure.message}`);
          log().error({ err: failure.message }, "send failed on the last attempt; notification failed");
          return { kind: "failed", error: failure.message };
        }
        await deps.notifications.release(id, failure.message, failure.sentMessageIds);
        log().warn({ err: failure.message }, "send failed; will retry");
        return { kind: "transient", error: failure.message };
    }
  }
  await deps.notifications.markSent(id, messageIds);
  if (infoOn) log().info({ chatId: Number(chatId), parts: messageIds.length, locale: message.locale }, "notification sent");
  return { kind: "sent", messageIds };
}
