import type { Notification } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";
import { RetryLaterError } from "@ratatoskr/runtime";
import type { ChatLease } from "./chat-lock.ts";
import {
  deliverNotification,
  failUnrenderable,
  renderNotification,
  settleDoubt,
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
  /** The job's own message: its outcome is returned if this drain handled it (none for a sweep). */
  targetId?: number;
  /** The chat's first page of unsettled messages, read with the job's message (before the lease). */
  firstPage?: Notification[];
  finalAttempt: boolean;
  signal: AbortSignal;
  logger: Logger;
}

/** Read a chat's queue in small pages: it changes while we send. */
export const CHAT_PAGE = 20;

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
    // The previous message's hold first, then the slot; the lease's own call may have taken it.
    await lease.flushSent();
    if (!lease.takePrefetchedSlot()) await deps.pacer.takeSlot(lease.chatId, signal);
  } catch (err) {
    if (err instanceof SlotDeferredError)
      throw new RetryLaterError(err.waitMs, `chat ${lease.chatId} is on hold`);
    throw err;
  }
  return deliverNotification(deps, notification, message, { finalAttempt, logger, signal: lease.lost });
}

/**
 * One unsettled message of the chat. A `sending` one was left by a lease holder that died
 * mid-send (only the holder claims): whether it arrived is unknown, so it is settled as a doubt
 * first. A must-deliver message in doubt is then sent once more, marked "(resent)".
 */
async function handleOne(
  deps: ChatDrainDeps,
  notification: Notification,
  request: ChatDrainRequest,
): Promise<DeliveryOutcome> {
  if (notification.status === "sending") {
    const settled = await settleDoubt(
      deps,
      notification,
      "the notifier sending it stopped mid-send; delivery unknown",
      "sender-died",
      request.logger,
    );
    if (settled.kind !== "resend") return settled;
  }
  for (;;) {
    // Rendered before the slot is taken, so the slot's time is the send's time.
    const message = await renderNotification(deps, notification);
    if (!message.ok) return failUnrenderable(deps, notification, message.problem, request.logger);
    const outcome = await sendInSlot(deps, notification, message, request);
    // A doubtful send of a must-deliver message goes once more at once (paced); the mark is
    // recorded, so a second doubt settles it as uncertain and this loop ends.
    if (outcome.kind !== "resend") return outcome;
  }
}

/**
 * With the chat's lease held, sends every unsettled message of the chat oldest first, each one
 * paced. A message that cannot go now stops the drain so nothing later overtakes it: a 429 holds
 * the chat and throws RetryLaterError, a transient failure throws for a backoff retry. Returns
 * the outcome of `targetId` if this drain handled it.
 */
export async function drainChat(
  deps: ChatDrainDeps,
  request: ChatDrainRequest,
): Promise<DeliveryOutcome | undefined> {
  const { lease, targetId, signal } = request;
  const chatId = lease.chatId;
  let target: DeliveryOutcome | undefined;
  let afterId = 0;
  let prefetched = request.firstPage;
  for (;;) {
    const page = prefetched ?? (await deps.notifications.listUnsettledForChat(chatId, afterId, CHAT_PAGE));
    prefetched = undefined;
    for (const notification of page) {
      signal.throwIfAborted();
      if (lease.lost.aborted) throw new RetryLaterError(0, `lost the send lease of chat ${chatId}`);
      afterId = notification.id;
      const outcome = await handleOne(deps, notification, request);
      if (notification.id === targetId) target = outcome;
      if (outcome.kind === "sent") lease.noteSent(outcome.messageIds.length);
      if (outcome.kind === "retry-after") {
        await deps.pacer.holdChat(chatId, outcome.waitMs);
        throw new RetryLaterError(outcome.waitMs, `Telegram asked chat ${chatId} to wait: ${outcome.error}`);
      }
      if (outcome.kind === "transient") {
        await lease.flushSent();
        throw new ChatSendError(`notification ${notification.id} to chat ${chatId}: ${outcome.error}`);
      }
    }
    // A short page was everything unsettled: reading again would find nothing. (A message
    // stored meanwhile has its own job, which drains it.)
    if (page.length < CHAT_PAGE) return target;
  }
}
