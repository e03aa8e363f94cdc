import type { QueueName } from "@ratatoskr/contracts";
import {
  createMetrics,
  createQueues,
  createRedisConnection,
  runWorker,
  type JobHandler,
  type RunWorkerOptions,
  type ServiceMetrics,
  type WorkerHandle,
} from "../../src/index.ts";
import { captureLogger, deleteKeys, testRedisUrl, uniquePrefix } from "./test-env.ts";

/** Redis connections, queues, metrics and workers under a fresh key prefix; `cleanup` removes it all. */
export function createWorkerHarness() {
  const redisUrl = testRedisUrl();
  const prefix = uniquePrefix();
  const captured = captureLogger();
  const { logger } = captured;
  const producer = createRedisConnection(redisUrl, "producer", { logger });
  const workerConnection = createRedisConnection(redisUrl, "worker", { logger });
  const queues = createQueues({ connection: producer, prefix, logger, backoffDelayMs: 10 });
  const metrics = createMetrics({ service: "test", defaultMetrics: false });
  const handles: WorkerHandle[] = [];

  function startWorker<Q extends QueueName>(
    queue: Q,
    handler: JobHandler<Q>,
    extra: Partial<RunWorkerOptions<Q>> = {},
  ): WorkerHandle {
    const handle = runWorker({
      queue,
      handler,
      connection: workerConnection,
      prefix,
      concurrency: 1,
      logger,
      metrics,
      ...extra,
    });
    handles.push(handle);
    return handle;
  }

  async function cleanup(): Promise<void> {
    await Promise.all(handles.map((h) => h.close(1_000)));
    await queues.close();
    producer.disconnect();
    workerConnection.disconnect();
    await deleteKeys(redisUrl, prefix);
  }

  return {
    redisUrl,
    prefix,
    captured,
    logger,
    producer,
    workerConnection,
    queues,
    metrics,
    startWorker,
    cleanup,
  };
}

export type WorkerHarness = ReturnType<typeof createWorkerHarness>;

/** Current value of one labelled series of a counter, 0 when it was never incremented. */
export async function metricValue(
  metrics: ServiceMetrics,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const match = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return match?.value ?? 0;
}
