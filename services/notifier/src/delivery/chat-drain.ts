import type { Notification } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";
import { RetryLaterError } from "@ratatoskr/runtime";
import type { ChatLease } from "./chat-lock.ts";
import {
  deliverNotification,
  failUnrenderable,
  renderNotification,
  type DeliveryDeps,
  type DeliveryOutcome,
  type RenderedMessage,
} from "./deliver-notification.ts";
import { SlotDeferredError, type SendPacer } from "./send-pacer.ts";

export interface ChatDrainDeps extends DeliveryDeps {
  pacer: SendPacer;
}

export interface ChatDrainRequest {
  lease: ChatLease;
  /** Send every pending message of the chat up to and including this one. */
  upToId: number;
  finalAttempt: boolean;
  signal: AbortSignal;
  logger: Logger;
}

/** Read a chat's queue in small pages: it changes while we send. */
const PAGE = 20;

/** Says why a transient send failure stopped the drain; the job retries with backoff. */
export class ChatSendError extends Error {
  override readonly name = "ChatSendError";
}

/** Waits for the chat's next send slot, then claims and sends. A long hold (429) defers the job. */
async function sendInSlot(
  deps: ChatDrainDeps,
  notification: Notification,
  message: RenderedMessage,
  { lease, finalAttempt, signal, logger }: ChatDrainRequest,
): Promise<DeliveryOutcome> {
  try {
    await deps.pacer.takeSlot(lease.chatId, signal);
  } catch (err) {
    if (err instanceof SlotDeferredError)
      throw new RetryLaterError(err.waitMs, `chat ${lease.chatId} is on hold`);
    throw err;
  }
  return deliverNotification(deps, notification, message, { finalAttempt, logger });
}

/**
 * With the chat's lease held, sends its pending messages oldest first up to `upToId`, each one
 * paced. A message that cannot go now stops the drain so nothing later overtakes it: a 429
 * holds the chat and throws RetryLaterError, a transient failure throws for a backoff retry.
 * Returns the outcome of `upToId` if this drain handled it.
 */
export async function drainChat(
  deps: ChatDrainDeps,
  request: ChatDrainRequest,
): Promise<DeliveryOutcome | undefined> {
  const { lease, upToId, signal, logger } = request;
  const chatId = lease.chatId;
  let target: DeliveryOutcome | undefined;
  for (;;) {
    const page = await deps.notifications.listPendingForChat(chatId, upToId, PAGE);
    if (page.length === 0) return target;
    for (const notification of page) {
      signal.throwIfAborted();
      if (!(await lease.extend())) throw new RetryLaterError(0, `lost the send lease of chat ${chatId}`);
      // Rendered before the slot is taken, so the slot's time is the send's time.
      const message = await renderNotification(deps, notification);
      const outcome = message.ok
        ? await sendInSlot(deps, notification, message, request)
        : await failUnrenderable(deps, notification, message.problem, logger);
      if (notification.id === upToId) target = outcome;
      if (outcome.kind === "sent") await deps.pacer.sent(chatId, outcome.messageIds.length);
      if (outcome.kind === "retry-after") {
        await deps.pacer.holdChat(chatId, outcome.waitMs);
        throw new RetryLaterError(outcome.waitMs, `Telegram asked chat ${chatId} to wait: ${outcome.error}`);
      }
      if (outcome.kind === "transient") {
        throw new ChatSendError(`notification ${notification.id} to chat ${chatId}: ${outcome.error}`);
      }
    }
    // A short page was everything pending up to `upToId`: reading again would find nothing.
    // (A message stored meanwhile has its own job, which drains it.)
    if (page.length < PAGE) return target;
  }
}
