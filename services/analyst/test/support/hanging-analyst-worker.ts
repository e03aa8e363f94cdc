/**
 * A separate process standing in for an analyst killed mid-run: it runs the real worker wrapper
 * (runWorker, its stalled limit) on the analyst queue with a handler that never returns, prints
 * `{"taken":"<jobId>"}` when it holds a job, and waits to be killed. Short lock and stalled check
 * (env LOCK_MS, STALLED_MS) keep the trial quick; the stalled limit is the production one.
 */
import { createLogger, createMetrics, createRedisConnection, runWorker } from "@ratatoskr/runtime";

const logger = createLogger({ service: "hanging-analyst", level: "warn" });
const connection = createRedisConnection(process.env.REDIS_URL!, "worker", { logger });
runWorker({
  queue: "analyst",
  prefix: process.env.QUEUE_PREFIX!,
  connection,
  concurrency: 1,
  logger,
  metrics: createMetrics({ service: "hanging-analyst", logger, defaultMetrics: false }),
  lockDurationMs: Number(process.env.LOCK_MS ?? 1_000),
  stalledIntervalMs: Number(process.env.STALLED_MS ?? 300),
  handler: async (_data, ctx) => {
    process.stdout.write(`${JSON.stringify({ taken: ctx.job.id })}\n`);
    await new Promise(() => undefined);
  },
});
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
