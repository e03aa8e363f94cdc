import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  JOB_CATALOG,
  QUEUE_NAMES,
  parseJobData,
  type AnyJobRequest,
  type JobData,
  type JobRequest,
  type QueueName,
} from "@ratatoskr/contracts";
import { createOutageLog } from "../logging/outage-log.ts";
import { scrubError, scrubSecrets } from "../logging/secret-scrubber.ts";
import { withTimeout } from "../util/with-timeout.ts";
import { defaultJobOptions, type JobOptionsOverrides } from "./job-options.ts";

export type QueueMap = { readonly [Q in QueueName]: Queue<JobData<Q>> };

/** Redis refused or could not take the job (down, read-only…): answer 503, the sender retries. */
export class QueueUnavailableError extends Error {
  override readonly name = "QueueUnavailableError";
}

export interface QueueSet {
  readonly queues: QueueMap;
  /**
   * Validates the payload against its consumer's schema (JobPayloadError: a producer bug) and
   * adds it under its deterministic id, so enqueueing the same follow-up twice is a no-op.
   */
  enqueue<Q extends QueueName>(request: JobRequest<Q>): Promise<{ jobId: string }>;
  /**
   * `enqueue` for many jobs: each validated first, then one round trip per queue (addBulk). All
   * or nothing from the caller's view: on an error none is known to be queued.
   */
  enqueueBulk(requests: readonly AnyJobRequest[]): Promise<void>;
  close(): Promise<void>;
}

export interface CreateQueuesOptions extends JobOptionsOverrides {
  /** A `producer` connection: enqueueing fails fast while Redis is down. */
  connection: Redis;
  /** BullMQ key prefix (QUEUE_PREFIX); producers and workers must agree on it. */
  prefix: string;
  logger: Logger;
  /**
   * Bound on one enqueue (default 5_000). A producer connection fails at once while Redis is
   * down, but BullMQ waits for a connection that has never been ready; this caps that wait.
   */
  enqueueTimeoutMs?: number;
}

/** BullMQ's own rules for custom ids, checked here so they never look like an outage. */
function assertJobId(queue: QueueName, jobId: string): void {
  if (!jobId || jobId.includes(":") || /^\d+$/.test(jobId)) {
    throw new Error(`${queue} job id must be a non-numeric string without ":", got ${JSON.stringify(jobId)}`);
  }
}

export function createQueues(opts: CreateQueuesOptions): QueueSet {
  const log = opts.logger.child({ component: "queues" });
  const enqueueTimeoutMs = opts.enqueueTimeoutMs ?? 5_000;
  const entries = QUEUE_NAMES.map((name) => {
    const queue = new Queue(name, {
      connection: opts.connection,
      prefix: opts.prefix,
      defaultJobOptions: defaultJobOptions(name, opts),
    });
    // Without a listener BullMQ falls back to console.error for connection errors; an outage is
    // told once (and reminded), not once per failed call.
    const outage = createOutageLog({
      logger: log.child({ queue: name }),
      what: `${name} queue's redis`,
      describe: scrubError,
    });
    queue.on("error", (err) => outage.failed(err));
    opts.connection.on("ready", () => outage.recovered());
    return [name, queue] as const;
  });
  const queues = Object.freeze(Object.fromEntries(entries)) as unknown as QueueMap;

  return {
    queues,
    async enqueue<Q extends QueueName>(request: JobRequest<Q>) {
      const data = parseJobData(request.queue, request.data);
      assertJobId(request.queue, request.jobId);
      // Queue<JobData<Q>> for a generic Q defeats BullMQ's name inference; the data is validated above.
      const queue: Queue = queues[request.queue];
      try {
        const adding = queue.add(JOB_CATALOG[request.queue].jobName, data, { jobId: request.jobId });
        const job = await withTimeout(adding, enqueueTimeoutMs, `enqueue ${request.queue} job`);
        return { jobId: job.id ?? request.jobId };
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new QueueUnavailableError(`could not enqueue ${request.queue} job: ${scrubSecrets(message)}`, {
          cause: err,
        });
      }
    },
    async enqueueBulk(requests) {
      const byQueue = new Map<QueueName, Array<{ name: string; data: unknown; opts: { jobId: string } }>>();
      for (const request of requests) {
        const data = parseJobData(request.queue, request.data);
        assertJobId(request.queue, request.jobId);
        const jobs = byQueue.get(request.queue) ?? [];
        jobs.push({ name: JOB_CATALOG[request.queue].jobName, data, opts: { jobId: request.jobId } });
        byQueue.set(request.queue, jobs);
      }
      try {
        const adding = Promise.all([...byQueue].map(([name, jobs]) => (queues[name] as Queue).addBulk(jobs)));
        await withTimeout(adding, enqueueTimeoutMs, `enqueue ${requests.length} jobs`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new QueueUnavailableError(`could not enqueue jobs: ${scrubSecrets(message)}`, { cause: err });
      }
    },
    async close() {
      await Promise.all(entries.map(([, queue]) => queue.close()));
    },
  };
}
