import { UnrecoverableError } from "bullmq";
import { JobPayloadError } from "@ratatoskr/contracts";
import type { FailureReason } from "../metrics/service-metrics.ts";

/**
 * An error retrying cannot fix (a 4xx from Gitea, a missing repository, an illegal transition).
 * The job fails at once instead of backing off. Errors from other packages may instead carry
 * `permanent: true`, so they need not import this class.
 */
export class PermanentError extends Error {
  override readonly name: string = "PermanentError";
  readonly permanent = true;
}

/** 4xx means the request itself is wrong, except 408 (timeout) and 429 (rate limit). */
export function isPermanentHttpStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export function isPermanentError(err: unknown): boolean {
  if (err instanceof PermanentError || err instanceof UnrecoverableError) return true;
  if (typeof err !== "object" || err === null) return false;
  return (
    (err as { permanent?: unknown }).permanent === true ||
    (err as { name?: unknown }).name === "UnrecoverableError"
  );
}

export function classifyFailure(err: unknown): FailureReason {
  if (err instanceof JobPayloadError) return "payload";
  return isPermanentError(err) ? "permanent" : "transient";
}
