/**
 * No-op jobs through `runWorker` (validation, logging, metrics, hand-back bookkeeping) against
 * raw BullMQ with the same options (concurrency, job options, stalled settings): jobs queued
 * first, then the time until a worker has completed them all.
 * `pnpm tsx bench/worker-jobs.ts [--smoke]`
 */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { JOB_CATALOG } from "../packages/contracts/src/index.ts";
import { createLogger, createMetrics, defaultJobOptions, runWorker } from "../packages/runtime/src/index.ts";
import { benchId, REDIS_URL } from "./lib/bench-env.ts";
import {
  benchMain,
  interleave,
  median,
  ratioRow,
  type BenchOptions,
  type BenchRow,
} from "./lib/bench-harness.ts";

const QUEUE = "review" as const;
const CONCURRENCY = 10;

interface Started {
  worker: Worker;
  close(): Promise<unknown>;
}

/**
 * Queues `count` valid jobs, starts a worker, resolves with jobs/s once all completed. Finished
 * jobs are counted from the worker's events: retention keeps fewer completed jobs than a run makes.
 */
async function drain(prefix: string, count: number, start: () => Started): Promise<number> {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUE, { connection, prefix, defaultJobOptions: defaultJobOptions(QUEUE) });
  const name = JOB_CATALOG[QUEUE].jobName;
  for (let i = 0; i < count; i += 500) {
    const n = Math.min(500, count - i);
    await queue.addBulk(
      Array.from({ length: n }, (_, k) => ({
        name,
        data: { v: 1 as const, taskId: i + k + 1, kind: "diff" as const, round: 1 },
        opts: { jobId: `${i + k + 1}-review-1` },
      })),
    );
  }
  const started = performance.now();
  const handle = start();
  await new Promise<void>((resolve) => {
    let finished = 0;
    const onFinished = () => {
      if (++finished === count) resolve();
    };
    handle.worker.on("completed", onFinished);
    handle.worker.on("failed", onFinished);
  });
  const rate = (count * 1000) / (performance.now() - started);
  await handle.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return rate;
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const count = options.smoke ? 50 : 3000;
  const rounds = options.smoke ? 1 : 5;
  const logger = createLogger({ service: "bench", level: "info", destination: { write: () => undefined } });
  const metrics = createMetrics({ service: "bench", defaultMetrics: false });
  const connections: Redis[] = [];
  const connection = () => {
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(c);
    return c;
  };
  const results = await interleave(rounds, {
    ours: () => {
      const prefix = benchId("worker");
      return drain(prefix, count, () => {
        const handle = runWorker({
          queue: QUEUE,
          handler: async () => ({ ok: true }),
          connection: connection(),
          prefix,
          concurrency: CONCURRENCY,
          logger,
          metrics,
        });
        return { worker: handle.worker, close: () => handle.close(5_000) };
      });
    },
    floor: () => {
      const prefix = benchId("worker");
      return drain(prefix, count, () => {
        const worker = new Worker(QUEUE, async () => ({ ok: true }), {
          connection: connection(),
          prefix,
          concurrency: CONCURRENCY,
          maxStalledCount: 2,
        });
        return { worker, close: () => worker.close() };
      });
    },
  });
  for (const c of connections) c.disconnect();
  return [
    ratioRow(options, {
      measure: `no-op jobs through runWorker (concurrency ${CONCURRENCY})`,
      ours: median(results.ours),
      floor: median(results.floor),
      unit: "jobs/s",
      minRatio: 0.8,
    }),
  ];
}

benchMain(import.meta.url, run);
