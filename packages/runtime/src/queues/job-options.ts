import type { JobsOptions } from "bullmq";
import { JOB_CATALOG, type QueueName } from "@ratatoskr/contracts";

/** First retry delay; each further attempt doubles it. */
export const DEFAULT_BACKOFF_DELAY_MS = 5_000;

/**
 * Finished jobs are kept (not just for Bull Board): a deterministic job id only deduplicates an
 * enqueue while the earlier job still exists, so retention is the dedupe window.
 */
export const COMPLETED_RETENTION = { age: 7 * 24 * 3_600, count: 10_000 } as const;
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
