import {
  PermanentTelegramError,
  RetryAfterError,
  UncertainDeliveryError,
  type PermanentReason,
} from "../telegram/index.ts";

/** Reasons that mean this chat cannot receive messages: the message is dropped, not failed. */
const UNREACHABLE: ReadonlySet<PermanentReason> = new Set<PermanentReason>([
  "chat-not-found",
  "bot-blocked",
  "bot-kicked",
  "user-deactivated",
  "chat-migrated",
  "forbidden",
]);

/** What a failed send means for the notification and for the chat's queue of messages. */
export type SendFailure =
  /** 429: nothing more to this chat before `waitMs`; the message goes back to pending. */
  | { kind: "retry-after"; waitMs: number; sentMessageIds: readonly number[]; message: string }
  /** The chat is gone or blocked us: drop the message (a person's doing, not a fault). */
  | { kind: "unreachable"; reason: PermanentReason; message: string }
  /** Telegram rejected the message itself (bad markup, too long, bad token): our fault, fail it. */
  | { kind: "rejected"; reason: PermanentReason; message: string }
  /** Certainly not delivered (refused connection, a 5xx answer): retry with backoff. */
  | { kind: "transient"; sentMessageIds: readonly number[]; message: string }
  /** May have been delivered (timeout, reset after the request went out): never blindly resent. */
  | { kind: "in-doubt"; sentMessageIds: readonly number[]; message: string };

function partsSent(err: unknown): readonly number[] {
  const ids = (err as { sentMessageIds?: unknown } | null)?.sentMessageIds;
  return Array.isArray(ids) ? ids.filter((id): id is number => typeof id === "number") : [];
}

export function classifySendFailure(err: unknown): SendFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RetryAfterError) {
    return { kind: "retry-after", waitMs: err.retryAfterMs, sentMessageIds: err.sentMessageIds, message };
  }
  if (err instanceof UncertainDeliveryError) {
    return { kind: "in-doubt", sentMessageIds: err.sentMessageIds, message };
  }
  if (err instanceof PermanentTelegramError) {
    const kind = UNREACHABLE.has(err.reason) ? "unreachable" : "rejected";
    return { kind, reason: err.reason, message };
  }
  // A channel that throws something else (the log channel, a test double) made no Bot API call.
  return { kind: "transient", sentMessageIds: partsSent(err), message };
}
