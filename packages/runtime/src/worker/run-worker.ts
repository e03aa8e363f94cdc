import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { parseJobData, type JobData, type QueueName } from "@ratatoskr/contracts";
import { jobLogger } from "../logging/logger.ts";
import { createOutageLog } from "../logging/outage-log.ts";
import { scrubError } from "../logging/secret-scrubber.ts";
import type { JobOutcome, ServiceMetrics } from "../metrics/service-metrics.ts";
import { settlesWithin } from "../util/with-timeout.ts";
import { InFlightJobs, type RunningJob } from "./in-flight-jobs.ts";
import { classifyFailure } from "./job-errors.ts";
import { isSkipped } from "./job-result.ts";
import { isOutageError, outageDelayMs } from "./outage-errors.ts";
import { RetryLaterError } from "./retry-later.ts";

export interface JobContext<Q extends QueueName> {
  readonly job: Job<JobData<Q>>;
  /** Child logger carrying queue, jobId and taskId. */
  readonly logger: Logger;
  /**
   * Aborts when the job must stop: the shutdown grace period ended (the job is being handed
   * back to the queue) or the job was cancelled (`WorkerHandle.cancel`). Pass it to every long wait.
   */
  readonly signal: AbortSignal;
}

/**
 * Handles one job. Throw PermanentError (or an error with `permanent: true`) for failures a retry
 * cannot fix; anything else is retried with backoff. Return `skipped(reason)` for expected no-ops.
 * Throw RetryLaterError to wait a known time (a 429, a busy resource) without using an attempt.
 */
export type JobHandler<Q extends QueueName> = (data: JobData<Q>, ctx: JobContext<Q>) => Promise<unknown>;

export interface RunWorkerOptions<Q extends QueueName> {
  queue: Q;
  handler: JobHandler<Q>;
  /** A `worker` connection (`maxRetriesPerRequest: null`). */
  connection: Redis;
  prefix: string;
  concurrency: number;
  logger: Logger;
  metrics: ServiceMetrics;
  /** How long a job stays locked without renewal before another worker may take it (default 15_000). */
  lockDurationMs?: number;
  /** How often stalled jobs are looked for (default 5_000). */
  stalledIntervalMs?: number;
  /** First wait of a job whose dependency is away (default 1_000); doubles up to 10×. */
  outageDelayMs?: number;
}

/** drained: every job finished; handed-back: the rest went back to wait; abandoned: Redis did not answer. */
export type WorkerCloseResult = "drained" | "handed-back" | "abandoned";

export interface WorkerHandle {
  readonly queue: QueueName;
  readonly worker: Worker;
  /**
   * Stops taking jobs, lets running ones finish for up to `timeoutMs` (BullMQ's close has no
   * deadline of its own), then hands the rest back to the queue. Idempotent.
   */
  close(timeoutMs: number): Promise<WorkerCloseResult>;
  /** Aborts the signal of a job this worker is running; false when it is not running it here. */
  cancel(jobId: string, reason: string): boolean;
}

/** After handing jobs back, how long closing may still take before we give up on Redis. */
const HAND_BACK_GRACE_MS = 5_000;

/** A job that stalls (its worker died) more often than this is failed rather than looping forever. */
const MAX_STALLED_COUNT = 2;

/**
 * A killed worker's job is picked up within lock + two checks ≤ 25 s (issue 7), not BullMQ's
 * 60 s: a check first marks the active jobs, a later one moves those whose lock has expired.
 * The lock is renewed every half of it, so a busy event loop has 7.5 s of slack.
 */
export const DEFAULT_LOCK_DURATION_MS = 15_000;
export const DEFAULT_STALLED_INTERVAL_MS = 5_000;

function taskIdOf(data: unknown): number | undefined {
  const taskId = (data as { taskId?: unknown } | null)?.taskId;
  return typeof taskId === "number" ? taskId : undefined;
}

/** What a handler gets; its child logger is built on first use: a job that logs nothing pays nothing. */
class HandlerContext<Q extends QueueName> implements JobContext<Q> {
  private log: Logger | undefined;

  constructor(
    readonly job: Job<JobData<Q>>,
    private readonly running: RunningJob,
    private readonly baseLogger: Logger,
    private readonly queue: Q,
  ) {}

  get logger(): Logger {
    return (this.log ??= jobLogger(this.baseLogger, {
      queue: this.queue,
      jobId: this.job.id,
      taskId: taskIdOf(this.job.data),
    }));
  }

  get signal(): AbortSignal {
    return this.running.signal;
  }
}

export function runWorker<Q extends QueueName>(opts: RunWorkerOptions<Q>): WorkerHandle {
  const { queue, handler, metrics } = opts;
  const log = opts.logger.child({ component: "worker", queue });
  const inFlight = new InFlightJobs(log);
  /** Failures this wrapper already logged, so the `failed` listener reports only the others. */
  const reported = new WeakSet<Error>();

  const count = (outcome: JobOutcome) => metrics.jobsProcessed.inc({ queue, outcome });
  /** Outage retries per job in this process: the backoff grows while the outage lasts. */
  const outageRetries = new Map<string, number>();

  function failAttempt(err: unknown, job: Job, jobLog: Logger): Error {
    const reason = classifyFailure(err);
    metrics.jobFailures.inc({ queue, reason });
    const safe = scrubError(err);
    if (reason !== "transient") {
      count("failed");
      jobLog.error({ err: safe, reason }, "job failed permanently");
      const unrecoverable = new UnrecoverableError(safe.message);
      reported.add(unrecoverable);
      return unrecoverable;
    }
    const attempt = job.attemptsMade + 1;
    const attempts = job.opts.attempts ?? 1;
    const willRetry = attempt < attempts;
    count(willRetry ? "retrying" : "failed");
    jobLog[willRetry ? "warn" : "error"](
      { err: safe, reason, attempt, attempts },
      willRetry ? "job attempt failed, will retry" : "job failed after its last attempt",
    );
    reported.add(safe);
    return safe;
  }

  const debugEnabled = () => opts.logger.isLevelEnabled("debug");

  // Two parameters on purpose: BullMQ makes an AbortController for every job of a processor that
  // takes a third (its cancel signal); cancelling goes through `WorkerHandle.cancel` instead.
  const processor = async (job: Job, token?: string): Promise<unknown> => {
    const running = inFlight.start(job, token);
    const context = new HandlerContext(job as Job<JobData<Q>>, running, opts.logger, queue);
    const jobLog = () => context.logger;
    const endTimer = metrics.jobDuration.startTimer({ queue });
    try {
      // Validated once, here, where the job enters the process (the producer's types built it).
      const data = parseJobData(queue, job.data);
      if (debugEnabled()) {
        // Where a hop's time went: since the producer added the job, and since BullMQ handed it here.
        const now = Date.now();
        const queuedMs = now - job.timestamp;
        const pickedUpMs = job.processedOn === undefined ? undefined : now - job.processedOn;
        jobLog().debug({ attempt: job.attemptsMade + 1, queuedMs, pickedUpMs }, "job started");
      }
      const result = await running.run(handler(data, context));
      outageRetries.delete(job.id ?? "");
      const outcome = isSkipped(result) ? "skipped" : "completed";
      count(outcome);
      // Per-job success lines are debug: at info the log carries what needs attention.
      if (debugEnabled())
        jobLog().debug(
          outcome === "skipped" ? { reason: (result as { reason: string }).reason } : {},
          `job ${outcome}`,
        );
      return result;
    } catch (err) {
      if (running.isHandedBack) {
        await running.handBackDone;
        count("handed-back");
        jobLog().warn("job handed back to the queue at shutdown");
        // BullMQ leaves a job alone after WaitingError: it is already back in `wait`.
        throw new WaitingError();
      }
      if (err instanceof RetryLaterError && token !== undefined) {
        await job.moveToDelayed(Date.now() + err.delayMs, token);
        count("retrying");
        jobLog().info({ delayMs: err.delayMs, reason: err.message }, "job delayed, attempt not counted");
        // BullMQ leaves a job alone after DelayedError: it is already in `delayed`.
        throw new DelayedError();
      }
      if (token !== undefined && isOutageError(err)) {
        // Postgres or Redis away: the job waits it out without using an attempt (issue 7, item 3).
        const key = job.id ?? "";
        const retry = (outageRetries.get(key) ?? 0) + 1;
        const delayMs = outageDelayMs(retry, opts.outageDelayMs);
        await job.moveToDelayed(Date.now() + delayMs, token);
        outageRetries.set(key, retry);
        count("retrying");
        const fields = { err: scrubError(err), retry, delayMs };
        if (retry === 1) jobLog().warn(fields, "job waits out an outage, attempt not counted");
        else jobLog().debug(fields, "job still waiting out an outage");
        throw new DelayedError();
      }
      outageRetries.delete(job.id ?? "");
      throw failAttempt(err, job, jobLog());
    } finally {
      inFlight.finish(job);
      endTimer();
    }
  };

  const worker = new Worker(queue, processor, {
    connection: opts.connection,
    prefix: opts.prefix,
    concurrency: opts.concurrency,
    maxStalledCount: MAX_STALLED_COUNT,
    lockDuration: opts.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS,
    stalledInterval: opts.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
  });
  // Without these, BullMQ reports lost connections and lock renewals unstructured on stderr.
  // While Redis is away every blocked call fails again and again: told once, reminded, then "back".
  const outage = createOutageLog({ logger: log, what: `${queue} worker's redis`, describe: scrubError });
  worker.on("error", (err) => outage.failed(err));
  opts.connection.on("ready", () => outage.recovered());
  worker.on("failed", (job, err) => {
    if (!reported.has(err))
      log.error({ err: scrubError(err), jobId: job?.id }, "job failed outside its handler");
  });
  worker.on("stalled", (jobId) => log.warn({ jobId }, "job stalled (its worker stopped); returned to wait"));

  let closing: Promise<WorkerCloseResult> | undefined;
  async function close(timeoutMs: number): Promise<WorkerCloseResult> {
    const closed = worker.close();
    if (await settlesWithin(closed, timeoutMs)) return "drained";
    const handedBack = await inFlight.handBackAll(`shutdown grace period of ${timeoutMs} ms ended`);
    log.warn({ jobs: handedBack, timeoutMs }, "jobs still running at shutdown were handed back to the queue");
    if (await settlesWithin(closed, HAND_BACK_GRACE_MS)) return "handed-back";
    log.error("worker did not close; its jobs return to the queue when their locks expire");
    return "abandoned";
  }

  return {
    queue,
    worker,
    close(timeoutMs) {
      closing ??= close(timeoutMs);
      return closing;
    },
    cancel: (jobId, reason) => inFlight.cancel(jobId, reason),
  };
}
