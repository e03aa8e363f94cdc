/**
 * No-op jobs through `runWorker` (validation, logging, metrics, hand-back bookkeeping) against
 * raw BullMQ with the same options (concurrency, job options, lock and stalled settings): jobs
 * queued first, then the time until a worker has completed them all. Each sample lasts about a
 * second (20,000 jobs): shorter ones swung 0.68–1.13× between runs on a quiet machine. The note
 * gives this process's CPU per job, which moves less with the machine's load than the rate.
 * `pnpm tsx bench/worker-jobs.ts [--smoke]`
 */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { JOB_CATALOG } from "../packages/contracts/src/index.ts";
import {
  createLogger,
  createMetrics,
  DEFAULT_LOCK_DURATION_MS,
  DEFAULT_STALLED_INTERVAL_MS,
  defaultJobOptions,
  runWorker,
} from "../packages/runtime/src/index.ts";
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

interface Drained {
  rate: number;
  cpuMicrosPerJob: number;
}

/**
 * Queues `count` valid jobs, starts a worker, resolves with jobs/s (and CPU µs per job) once all
 * completed. Finished jobs are counted from the worker's events: retention keeps fewer completed
 * jobs than a run makes.
 */
async function drain(prefix: string, count: number, start: () => Started): Promise<Drained> {
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
  const cpuFrom = process.cpuUsage();
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
  const cpu = process.cpuUsage(cpuFrom);
  await handle.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return { rate, cpuMicrosPerJob: (cpu.user + cpu.system) / count };
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const count = options.smoke ? 50 : 20_000;
  const rounds = options.smoke ? 1 : 5;
  const logger = createLogger({ service: "bench", level: "info", destination: { write: () => undefined } });
  const metrics = createMetrics({ service: "bench", defaultMetrics: false });
  const connections: Redis[] = [];
  const connection = () => {
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(c);
    return c;
  };
  const cpu = { ours: [] as number[], floor: [] as number[] };
  const sample = async (side: keyof typeof cpu, run: Promise<Drained>) => {
    const { rate, cpuMicrosPerJob } = await run;
    cpu[side].push(cpuMicrosPerJob);
    return rate;
  };
  const results = await interleave(rounds, {
    ours: () => {
      const prefix = benchId("worker");
      const run = drain(prefix, count, () => {
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
      return sample("ours", run);
    },
    floor: () => {
      const prefix = benchId("worker");
      const run = drain(prefix, count, () => {
        const worker = new Worker(QUEUE, async () => ({ ok: true }), {
          connection: connection(),
          prefix,
          concurrency: CONCURRENCY,
          maxStalledCount: 2,
          lockDuration: DEFAULT_LOCK_DURATION_MS,
          stalledInterval: DEFAULT_STALLED_INTERVAL_MS,
        });
        return { worker, close: () => worker.close() };
      });
      return sample("floor", run);
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
      note: `CPU per job in this process: ours ${median(cpu.ours).toFixed(1)} µs, floor ${median(cpu.floor).toFixed(1)} µs`,
    }),
  ];
}

benchMain(import.meta.url, run);
