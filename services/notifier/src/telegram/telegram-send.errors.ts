import type { PermanentReason } from "./telegram-error.classifier.ts";

/**
 * Every send error says which parts of the logical message already went out, so a retried job
 * resumes after them instead of sending them twice.
 */
export interface PartialDelivery {
  /** Message ids of the parts sent before the failure, in order. */
  readonly sentMessageIds: readonly number[];
}

/** Telegram asked us to wait (429): the queue layer delays the job by `retryAfterMs`. */
export class RetryAfterError extends Error implements PartialDelivery {
  override readonly name = "RetryAfterError";
  constructor(
    readonly retryAfterMs: number,
    readonly sentMessageIds: readonly number[] = [],
    options?: { cause?: unknown },
  ) {
    super(`Telegram asked to retry after ${retryAfterMs} ms`, options);
  }
}

/** Retrying cannot help (blocked bot, chat gone, rejected request): fail the job for good. */
export class PermanentTelegramError extends Error implements PartialDelivery {
  override readonly name = "PermanentTelegramError";
  constructor(
    readonly reason: PermanentReason,
    description: string,
    readonly sentMessageIds: readonly number[] = [],
    options?: { cause?: unknown },
  ) {
    super(`Telegram refused permanently (${reason}): ${description}`, options);
  }
}

/** A failed call described in words, with the parts that went out before it. */
abstract class DescribedSendError extends Error implements PartialDelivery {
  constructor(
    what: string,
    description: string,
    readonly sentMessageIds: readonly number[] = [],
    options?: { cause?: unknown },
  ) {
    super(`${what}: ${description}`, options);
  }
}

/**
 * The call certainly did not take effect (connection refused, DNS, TLS, a 5xx or 429 answer
 * without retry_after): retry with backoff.
 */
export class TransientTelegramError extends DescribedSendError {
  override readonly name = "TransientTelegramError";
  constructor(description: string, sentMessageIds?: readonly number[], options?: { cause?: unknown }) {
    super("Telegram call failed, worth retrying", description, sentMessageIds, options);
  }
}

/**
 * The request may have reached Telegram and the answer was lost (timeout, reset or a closed
 * socket after it was written): the part may be in the chat. Never blindly resent.
 */
export class UncertainDeliveryError extends DescribedSendError {
  override readonly name = "UncertainDeliveryError";
  constructor(description: string, sentMessageIds?: readonly number[], options?: { cause?: unknown }) {
    super("Telegram call may have gone through, answer lost", description, sentMessageIds, options);
  }
}
