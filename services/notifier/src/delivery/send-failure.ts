import { PermanentTelegramError, RetryAfterError, type PermanentReason } from "../telegram/index.ts";

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
  /** Network, timeout, 5xx or anything unknown: retry with backoff. */
  | { kind: "transient"; sentMessageIds: readonly number[]; message: string };

function partsSent(err: unknown): readonly number[] {
  const ids = (err as { sentMessageIds?: unknown } | null)?.sentMessageIds;
  return Array.isArray(ids) ? ids.filter((id): id is number => typeof id === "number") : [];
}

export function classifySendFailure(err: unknown): SendFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RetryAfterError) {
    return { kind: "retry-after", waitMs: err.retryAfterMs, sentMessageIds: err.sentMessageIds, message };
  }
  if (err instanceof PermanentTelegramError) {
    const kind = UNREACHABLE.has(err.reason) ? "unreachable" : "rejected";
    return { kind, reason: err.reason, message };
  }
  return { kind: "transient", sentMessageIds: partsSent(err), message };
}
