import type { JobsOptions } from "bullmq";
import { JOB_CATALOG, type QueueName } from "@ratatoskr/contracts";

/** First retry delay; each further attempt doubles it. */
export const DEFAULT_BACKOFF_DELAY_MS = 5_000;

/**
 * Every job is enqueued under a deterministic id, and that id only deduplicates an enqueue while
 * the earlier job still exists: completed jobs are kept for the dedupe window and no longer. The
 * window covers the one repeat there is, the outbox reconciler re-enqueueing a row whose
 * dispatch mark a crash lost (it looks at rows older than 30 s; a restart takes minutes), with
 * room to spare. The count caps a burst's memory in Redis. Failed jobs stay for people to read.
 */
export const DEDUPE_WINDOW_S = 3_600;
export const COMPLETED_RETENTION = { age: DEDUPE_WINDOW_S, count: 1_000 } as const;
export const FAILED_RETENTION = { age: 30 * 24 * 3_600 } as const;

export interface JobOptionsOverrides {
  /** Tests shorten this to keep retries fast. */
  backoffDelayMs?: number;
}

/** The one place that turns the job catalog's retry policy into BullMQ options. */
export function defaultJobOptions(queue: QueueName, overrides: JobOptionsOverrides = {}): JobsOptions {
  return {
    attempts: JOB_CATALOG[queue].attempts,
    backoff: { type: "exponential", delay: overrides.backoffDelayMs ?? DEFAULT_BACKOFF_DELAY_MS },
    removeOnComplete: COMPLETED_RETENTION,
    removeOnFail: FAILED_RETENTION,
  };
}
