import { getMaxListeners, setMaxListeners } from "node:events";
import type { NotifyTarget } from "@ratatoskr/contracts";
import type { Logger } from "@ratatoskr/runtime";
import type { BackgroundWork } from "./background-work.ts";
import { drainChat, type ChatDrainDeps } from "./chat-drain.ts";
import type { ChatLease, ChatLocks } from "./chat-lock.ts";
import type { DeliveryOutcome } from "./deliver-notification.ts";

export interface ChatBatchDeps extends ChatDrainDeps {
  chatLocks: ChatLocks;
  /** Where the release of each chat's lease goes as the batch ends. */
  background: BackgroundWork;
}

export interface ChatBatchRequest {
  messages: readonly NotifyTarget[];
  finalAttempt: boolean;
  signal: AbortSignal;
  logger: Logger;
}

/** What became of one message of the batch. */
export type BatchMessageOutcome =
  | DeliveryOutcome
  /** Not sent by this batch, and no longer waiting: another sender handled it, or it never existed. */
  | { kind: "settled-elsewhere"; status: string }
  /** Still unsettled: its chat is held by another sender, or its drain stopped before it. */
  | { kind: "waiting"; reason: string };

export interface ChatBatchResult {
  outcomes: Map<number, BatchMessageOutcome>;
  /** Why drains stopped, per chat: a 429 hold or a lost lease (RetryLaterError), a send failure, an outage… */
  stopped: Map<number, unknown>;
}

const UNSETTLED = new Set(["pending", "sending"]);

/**
 * Delivers the messages of several chats with their fixed costs shared: the chats' leases (and
 * each chat's first send slot) in one round trip, then every leased chat drained at once — each
 * chat oldest first, paced as always — so the claims of the chats' heads go in one statement and
 * their results in one more (the repository's group commit), and the leases are freed together.
 * A chat another sender holds is left to it; a message whose chat the batch named wrongly is sent
 * in its own chat. Never throws for one chat's trouble: it is in `stopped`, the message `waiting`.
 */
export async function deliverChatBatch(deps: ChatBatchDeps, request: ChatBatchRequest): Promise<ChatBatchResult> {
  const outcomes = new Map<number, BatchMessageOutcome>();
  const stopped = new Map<number, unknown>();
  const drained = new Map<number, DeliveryOutcome>();
  const ids = request.messages.map((m) => m.notificationId);
  const busy = await drainChats(deps, request, uniqueChats(request.messages), drained, stopped);

  let unresolved = ids.filter((id) => !resolvedBy(drained.get(id)));
  if (unresolved.length > 0) {
    // What this batch did not send itself: settled by someone else, or waiting (and where).
    const states = new Map((await deps.notifications.findStates(unresolved)).map((s) => [s.id, s]));
    const named = new Map(request.messages.map((m) => [m.notificationId, m.chatId]));
    const misdirected = unresolved.filter((id) => {
      const state = states.get(id);
      return state && UNSETTLED.has(state.status) && state.chatId !== null && state.chatId !== named.get(id);
    });
    if (misdirected.length > 0) {
      const own = misdirected.map((id) => ({ notificationId: id, chatId: states.get(id)!.chatId! }));
      request.logger.warn({ notificationIds: misdirected }, "notify job named another chat; sending in the messages' own");
      for (const chatId of await drainChats(deps, request, uniqueChats(own), drained, stopped)) busy.add(chatId);
      for (const state of await deps.notifications.findStates(misdirected)) states.set(state.id, state);
    }
    unresolved = unresolved.filter((id) => !resolvedBy(drained.get(id)));
    for (const id of unresolved) {
      const state = states.get(id);
      if (!state) outcomes.set(id, { kind: "settled-elsewhere", status: "missing" });
      else if (!UNSETTLED.has(state.status)) outcomes.set(id, { kind: "settled-elsewhere", status: state.status });
      else if (state.chatId !== null && busy.has(state.chatId))
        outcomes.set(id, { kind: "waiting", reason: `chat ${state.chatId} is being sent to` });
      else outcomes.set(id, { kind: "waiting", reason: `notification ${id} still waits` });
    }
  }
  for (const id of ids) if (!outcomes.has(id)) outcomes.set(id, drained.get(id)!);
  return { outcomes, stopped };
}

/** A message's outcome is known when the drain settled it; `not-claimed` and a pending retry are not. */
function resolvedBy(outcome: DeliveryOutcome | undefined): boolean {
  return outcome !== undefined && outcome.kind !== "not-claimed" && outcome.kind !== "resend";
}

function uniqueChats(messages: readonly NotifyTarget[]): number[] {
  return [...new Set(messages.map((m) => m.chatId))];
}

/** Leases `chatIds` in one call and drains every leased one at once; returns the chats held elsewhere. */
async function drainChats(
  deps: ChatBatchDeps,
  request: ChatBatchRequest,
  chatIds: readonly number[],
  outcomes: Map<number, DeliveryOutcome>,
  stopped: Map<number, unknown>,
): Promise<Set<number>> {
  const leases = await deps.chatLocks.acquireMany(chatIds, request.signal);
  const busy = new Set(chatIds.filter((_, i) => leases[i] === null));
  const held = leases.filter((lease): lease is ChatLease => lease !== null);
  // Each chat's drain may wait on the job's signal (its slot, a confirm): one listener per chat is expected.
  if (getMaxListeners(request.signal) < held.length * 2) setMaxListeners(held.length * 2, request.signal);
  await Promise.all(
    held.map(async (lease) => {
      const logger = held.length > 1 ? request.logger.child({ chatId: lease.chatId }) : request.logger;
      try {
        await drainChat(deps, { lease, outcomes, finalAttempt: request.finalAttempt, signal: request.signal, logger });
      } catch (err) {
        stopped.set(lease.chatId, err);
      } finally {
        // Freed after the batch's results are recorded; if Redis is gone the lease simply expires.
        deps.background.add(
          lease.release().catch((err: unknown) => logger.warn({ err }, "could not release the chat lease")),
        );
      }
    }),
  );
  return busy;
}
