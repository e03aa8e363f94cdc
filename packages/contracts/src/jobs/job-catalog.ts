import type { z } from "zod";
import { QUEUE, type QueueName } from "../queues.ts";
import {
  analystJobSchema,
  devJobSchema,
  intakeJobSchema,
  notifyJobSchema,
  postmortemJobSchema,
  reviewJobSchema,
} from "./job-schemas.ts";
import { MAX_INPUT_DEPTH, nestedDeeperThan } from "../json-depth.ts";

interface CatalogEntry<S extends z.ZodType> {
  schema: S;
  /** Job name shown in Bull Board (verb-noun). */
  jobName: string;
  /** Attempts before a job is failed for good; transient errors back off exponentially. */
  attempts: number;
}

/** An entry whose schema is built when first read (see job-schemas.ts), then kept. */
function entry<S extends z.ZodType, N extends string, A extends number>(
  build: () => S,
  jobName: N,
  attempts: A,
): { readonly schema: S; readonly jobName: N; readonly attempts: A } {
  let schema: S | undefined;
  return {
    get schema() {
      return (schema ??= build());
    },
    jobName,
    attempts,
  };
}

/** One place for every queue's payload schema and retry policy. */
export const JOB_CATALOG = {
  [QUEUE.intake]: entry(intakeJobSchema, "route-command", 5),
  [QUEUE.analyst]: entry(analystJobSchema, "analyse-turn", 3),
  [QUEUE.dev]: entry(devJobSchema, "run-dev", 2),
  [QUEUE.review]: entry(reviewJobSchema, "review-diff", 2),
  [QUEUE.postmortem]: entry(postmortemJobSchema, "explain-failure", 2),
  [QUEUE.notify]: entry(notifyJobSchema, "send-notification", 8),
} as const satisfies { [Q in QueueName]: CatalogEntry<z.ZodType> };

export type JobCatalog = typeof JOB_CATALOG;
export type JobData<Q extends QueueName> = z.infer<JobCatalog[Q]["schema"]>;

/** A job to put on a queue: typed so a producer cannot build a payload its consumer rejects. */
export interface JobRequest<Q extends QueueName = QueueName> {
  queue: Q;
  data: JobData<Q>;
  /** Deterministic id: enqueueing the same follow-up twice is a no-op. */
  jobId: string;
}

export type AnyJobRequest = { [Q in QueueName]: JobRequest<Q> }[QueueName];

export class JobPayloadError extends Error {
  override readonly name = "JobPayloadError";
  constructor(
    readonly queue: QueueName,
    readonly issues: string,
  ) {
    super(`invalid ${queue} job payload: ${issues}`);
  }
}

/** Validates a payload read from a queue; throws JobPayloadError with every issue named. */
export function parseJobData<Q extends QueueName>(queue: Q, data: unknown): JobData<Q> {
  // Nothing recurses over a payload nested past this (logs, Bull Board, a retry): refused for good.
  if (nestedDeeperThan(data)) throw new JobPayloadError(queue, `nested deeper than ${MAX_INPUT_DEPTH} levels`);
  const result = JOB_CATALOG[queue].schema.safeParse(data);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new JobPayloadError(queue, issues);
  }
  return result.data as JobData<Q>;
}

/** Builds a job request after checking the payload against its consumer's schema. */
export function jobRequest<Q extends QueueName>(queue: Q, data: JobData<Q>, jobId: string): JobRequest<Q> {
  return { queue, data: parseJobData(queue, data), jobId };
}
