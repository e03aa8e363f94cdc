import type { Queue } from "bullmq";
import type { Logger } from "pino";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { withTimeout } from "../util/with-timeout.ts";

export type JobOutcome = "completed" | "skipped" | "retrying" | "failed" | "handed-back";
export type FailureReason = "permanent" | "transient" | "payload";

export const QUEUE_DEPTH_STATES = ["waiting", "active", "prioritized", "delayed", "failed"] as const;
/** Jobs that need a worker now: the autoscaling signal (delayed and failed ones do not). */
export const NEEDING_WORKER_STATES = ["waiting", "active", "prioritized"] as const;

/** Jobs run from milliseconds (notify) to most of an hour (dev); buckets in seconds. */
const DURATION_BUCKETS_S = [0.05, 0.25, 1, 5, 15, 60, 300, 900, 1_800, 3_600];

export interface ServiceMetrics {
  /** This process's registry; never prom-client's global default one. */
  readonly registry: Registry;
  readonly jobsProcessed: Counter<"queue" | "outcome">;
  readonly jobDuration: Histogram<"queue">;
  readonly jobFailures: Counter<"queue" | "reason">;
  readonly queueDepth: Gauge<"queue" | "state">;
  /** waiting + active + prioritized per queue and QUEUE_PREFIX (what KEDA scales on). */
  readonly jobsNeedingWorker: Gauge<"queue" | "prefix">;
  /** Logins refused on an authenticated endpoint (Bull Board), by why: wrong credentials, missing, locked out. */
  readonly loginFailures: Counter<"realm" | "reason">;
  /** 1 while a readiness check passes, 0 while it fails (the detail is in the log and behind auth). */
  readonly dependencyUp: Gauge<"check">;
  /** Report these queues' job counts on every scrape (the autoscaling signal). */
  observeQueueDepth(queues: Iterable<Queue>): void;
}

export interface CreateMetricsOptions {
  service: string;
  /** Process/Node.js metrics (CPU, memory, event loop); on unless a test turns them off. */
  defaultMetrics?: boolean;
  /** A scrape gives up on a queue's counts after this long (Redis down must not hang /metrics). */
  depthTimeoutMs?: number;
  logger?: Logger;
}

const prefixOf = (queue: Queue): string => queue.opts.prefix ?? "bull";

export function createMetrics(opts: CreateMetricsOptions): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service });
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });

  const observed = new Set<Queue>();
  const depthTimeoutMs = opts.depthTimeoutMs ?? 2_000;

  /** One read of the counts per scrape, shared by both gauges (prom-client collects them concurrently). */
  let refreshing: Promise<void> | undefined;
  const refresh = () => (refreshing ??= readDepths().finally(() => (refreshing = undefined)));

  const queueDepth: Gauge<"queue" | "state"> = new Gauge({
    name: "ratatoskr_queue_jobs",
    help: "Jobs in a queue by state, read from Redis at scrape time",
    labelNames: ["queue", "state"],
    registers: [registry],
    collect: refresh,
  });
  const jobsNeedingWorker: Gauge<"queue" | "prefix"> = new Gauge({
    name: "ratatoskr_queue_jobs_needing_worker",
    help: "Jobs waiting, active or prioritized in a queue (by QUEUE_PREFIX): the autoscaling signal",
    labelNames: ["queue", "prefix"],
    registers: [registry],
    collect: refresh,
  });

  async function readDepths(): Promise<void> {
    await Promise.all(
      [...observed].map(async (queue) => {
        const needingLabels = { queue: queue.name, prefix: prefixOf(queue) };
        try {
          const counts = await withTimeout(
            queue.getJobCounts(...QUEUE_DEPTH_STATES),
            depthTimeoutMs,
            "job counts",
          );
          for (const state of QUEUE_DEPTH_STATES)
            queueDepth.set({ queue: queue.name, state }, counts[state] ?? 0);
          const needing = NEEDING_WORKER_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
          jobsNeedingWorker.set(needingLabels, needing);
        } catch (err) {
          // A stale depth would drive autoscaling wrongly; an absent one is visible as absent.
          for (const state of QUEUE_DEPTH_STATES) queueDepth.remove({ queue: queue.name, state });
          jobsNeedingWorker.remove(needingLabels);
          opts.logger?.warn({ err, queue: queue.name }, "could not read queue depth");
        }
      }),
    );
  }

  return {
    registry,
    jobsProcessed: new Counter({
      name: "ratatoskr_jobs_processed_total",
      help: "Job attempts finished, by outcome",
      labelNames: ["queue", "outcome"],
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: "ratatoskr_job_duration_seconds",
      help: "Time a handler spent on one job attempt",
      labelNames: ["queue"],
      buckets: DURATION_BUCKETS_S,
      registers: [registry],
    }),
    jobFailures: new Counter({
      name: "ratatoskr_job_failures_total",
      help: "Failed job attempts: payload (schema), permanent (not retried), transient (retried)",
      labelNames: ["queue", "reason"],
      registers: [registry],
    }),
    loginFailures: new Counter({
      name: "ratatoskr_login_failures_total",
      help: "Logins refused: wrong credentials, a missing or malformed header, or a locked-out client",
      labelNames: ["realm", "reason"],
      registers: [registry],
    }),
    dependencyUp: new Gauge({
      name: "ratatoskr_dependency_up",
      help: "1 while the readiness check of a dependency passes, 0 while it fails",
      labelNames: ["check"],
      registers: [registry],
    }),
    queueDepth,
    jobsNeedingWorker,
    observeQueueDepth(queues) {
      for (const queue of queues) observed.add(queue);
    },
  };
}
