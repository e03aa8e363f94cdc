import type { Notification } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";
import { RetryLaterError } from "@ratatoskr/runtime";
import type { ChatLease } from "./chat-lock.ts";
import {
  deliverClaimed,
  failUnrenderable,
  renderNotification,
  settleDoubt,
  type DeliveryDeps,
  type DeliveryOutcome,
} from "./deliver-notification.ts";
import { SlotDeferredError, type SendPacer, type TakenSlot } from "./send-pacer.ts";

export interface ChatDrainDeps extends DeliveryDeps {
  pacer: SendPacer;
}

export interface ChatDrainRequest {
  lease: ChatLease;
  /** Where the outcome of every message this drain handles is recorded (by id), e.g. a job's own. */
  outcomes?: Map<number, DeliveryOutcome>;
  finalAttempt: boolean;
  signal: AbortSignal;
  logger: Logger;
}

/** Says why a transient send failure stopped the drain; the job retries with backoff. */
export class ChatSendError extends Error {
  override readonly name = "ChatSendError";
}

/** Waits for the chat's next send slot (the lease's own call may have taken it). A long hold (429) defers the job. */
async function takeSlot(deps: ChatDrainDeps, lease: ChatLease, signal: AbortSignal): Promise<TakenSlot> {
  try {
    // The previous message's hold first, then the slot.
    await lease.flushSent();
    return lease.takePrefetchedSlot() ?? (await deps.pacer.takeSlot(lease.chatId, signal));
  } catch (err) {
    if (err instanceof SlotDeferredError)
      throw new RetryLaterError(err.waitMs, `chat ${lease.chatId} is on hold`);
    throw err;
  }
}

/** A message claimed in its slot: rendered with its task's current facts and sent. */
async function sendClaimed(
  deps: ChatDrainDeps,
  claimed: Notification,
  slot: TakenSlot,
  { lease, finalAttempt, logger, signal }: ChatDrainRequest,
): Promise<DeliveryOutcome> {
  const message = await renderNotification(deps, claimed);
  if (!message.ok) return failUnrenderable(deps, claimed, message.problem, logger);
  await deps.pacer.confirmSlot(slot, signal);
  return deliverClaimed(deps, claimed, message, { finalAttempt, logger, signal: lease.lost });
}

/**
 * With the chat's lease held, sends every unsettled message of the chat oldest first, each in a
 * slot of its own: the slot first, then one statement claims the chat's oldest message and says
 * whether another follows (so the last send needs no empty re-read). A `sending` head was left
 * by a holder that died mid-send (only the holder claims): it is settled as a doubt, and a
 * must-deliver one goes again marked "(resent)" at the next turn. A message that cannot go now
 * stops the drain so nothing later overtakes it: a 429 holds the chat and throws RetryLaterError,
 * a transient failure throws for a backoff retry. Each handled message's outcome goes to
 * `outcomes`, before any throw.
 */
export async function drainChat(deps: ChatDrainDeps, request: ChatDrainRequest): Promise<void> {
  const { lease, outcomes, signal, logger } = request;
  const chatId = lease.chatId;
  let slot: TakenSlot | undefined;
  for (;;) {
    signal.throwIfAborted();
    if (lease.lost.aborted) throw new RetryLaterError(0, `lost the send lease of chat ${chatId}`);
    slot ??= await takeSlot(deps, lease, signal);
    const { head, claimed, more } = await deps.notifications.claimNextForChat(chatId);
    if (!head) return;
    let outcome: DeliveryOutcome;
    if (claimed) {
      const taken = slot;
      slot = undefined;
      outcome = await sendClaimed(deps, head, taken, request);
    } else if (head.status === "sending") {
      outcome = await settleDoubt(
        deps,
        head,
        "the notifier sending it stopped mid-send; delivery unknown",
        "sender-died",
        logger,
      );
    } else {
      // Settled or claimed by someone else under our lease: only a lost lease does that.
      throw new RetryLaterError(0, `chat ${chatId} changed under its lease`);
    }
    outcomes?.set(head.id, outcome);
    switch (outcome.kind) {
      case "sent":
        lease.noteSent(outcome.messageIds.length);
        break;
      case "retry-after":
        await deps.pacer.holdChat(chatId, outcome.waitMs);
        throw new RetryLaterError(outcome.waitMs, `Telegram asked chat ${chatId} to wait: ${outcome.error}`);
      case "transient":
        await lease.flushSent();
        throw new ChatSendError(`notification ${head.id} to chat ${chatId}: ${outcome.error}`);
      case "resend":
        // Pending again and still the chat's oldest: the next turn sends it, marked.
        continue;
      default:
        break;
    }
    // A message stored after this read has its own job, which drains it.
    if (!more) return;
  }
}
