/**
 * What the Telegram and Gitea webhook benches share: a load generator in a child process, and
 * the measurement — p50/p99 at a fixed rate (open loop) and the maximum (closed loop), ours and
 * a bare fastify floor interleaved and repeated — turned into rows.
 */
import type { ChildProcess } from "node:child_process";
import { forkBenchChild, endChild, nextMessage } from "./child-process.ts";
import type { LoadResult, LoadRun } from "./load-driver.ts";
import {
  interleave,
  median,
  percentile,
  ratioRow,
  type BenchOptions,
  type BenchRow,
} from "./bench-harness.ts";
import type { BackendConfig, BackendReady } from "./webhook-backend.ts";
import type { WebhookTarget } from "./webhook-payloads.ts";

type RunSpec =
  { mode: "rate"; rate: number; count: number } | { mode: "max"; concurrency: number; count: number };

export class LoadDriver {
  private nextId = 1;
  private constructor(private readonly child: ChildProcess) {}

  static start(): LoadDriver {
    return new LoadDriver(forkBenchChild(new URL("./load-driver.ts", import.meta.url)));
  }

  async run(target: WebhookTarget, spec: RunSpec): Promise<LoadResult> {
    const id = this.nextId++;
    const answer = nextMessage(this.child, (m) =>
      (m as LoadResult).id === id ? (m as LoadResult) : undefined,
    );
    this.child.send({ id, target, ...spec } satisfies LoadRun);
    return answer;
  }

  close(): Promise<void> {
    return endChild(this.child);
  }
}

export interface WebhookBenchSpec {
  /** Row label prefix, e.g. "gitea webhook". */
  label: string;
  ours: WebhookTarget;
  floor: WebhookTarget;
  rate: number;
  /** `p99VsDurable`: the most ours' p99 may be, as a multiple of the durable floor's (with durableFloor). */
  aim: { p99Ms: number; minRatio: number; p99VsDurable?: number };
  floorNote: string;
  /** Requests per maximum-throughput run (default 3,000; fewer where each leaves slow work behind). */
  maxCount?: number;
  /** Waits until work accepted by ours has drained, so the next measurement starts clean. */
  settle?: () => Promise<void>;
  /**
   * A second floor at the same rate: a bare route that only makes the request durable the way
   * ours does (one group-committed insert). Ours against it shows what our code adds beyond the
   * price of durability itself (the database round trip and commit).
   */
  durableFloor?: { target: WebhookTarget; note: string };
}

const COUNTS = {
  full: { warm: 400, rateSeconds: 6, rounds: 2, max: 3000, maxRounds: 3 },
  smoke: { warm: 20, rateSeconds: 0.2, rounds: 1, max: 100, maxRounds: 1 },
};

export async function measureWebhook(options: BenchOptions, spec: WebhookBenchSpec): Promise<BenchRow[]> {
  const counts = options.smoke ? COUNTS.smoke : { ...COUNTS.full, max: spec.maxCount ?? COUNTS.full.max };
  const driver = LoadDriver.start();
  const errors: string[] = [];
  const check = (variant: string, result: LoadResult) => {
    if (result.errors > 0) errors.push(`${variant}: ${result.errors} failed (${result.firstError})`);
    return result;
  };
  const settle = spec.settle ?? (async () => undefined);
  try {
    const durable = spec.durableFloor;
    for (const target of [spec.ours, spec.floor, ...(durable ? [durable.target] : [])])
      await driver.run(target, { mode: "max", concurrency: 16, count: counts.warm });
    await settle();
    const rateCount = Math.max(20, Math.round(spec.rate * counts.rateSeconds));
    const latencies = { ours: [] as number[], floor: [] as number[], durable: [] as number[] };
    const atRate = (target: WebhookTarget, variant: string, into: number[]) => async () => {
      const r = check(variant, await driver.run(target, { mode: "rate", rate: spec.rate, count: rateCount }));
      into.push(...(r.latencies ?? []));
      return 0;
    };
    const rateVariants: Record<string, () => Promise<number>> = {
      ours: async () => {
        await atRate(spec.ours, "ours at rate", latencies.ours)();
        await settle();
        return 0;
      },
      floor: atRate(spec.floor, "floor at rate", latencies.floor),
    };
    if (durable) rateVariants.durable = atRate(durable.target, "durable floor at rate", latencies.durable);
    await interleave(counts.rounds, rateVariants);
    const maxVariants: Record<string, () => Promise<number>> = {
      ours: async () => {
        const r = check(
          "ours max",
          await driver.run(spec.ours, { mode: "max", concurrency: 64, count: counts.max }),
        );
        await settle();
        return r.perSecond ?? NaN;
      },
      floor: async () =>
        check("floor max", await driver.run(spec.floor, { mode: "max", concurrency: 64, count: counts.max }))
          .perSecond ?? NaN,
    };
    if (durable)
      maxVariants.durable = async () =>
        check(
          "durable floor max",
          await driver.run(durable.target, { mode: "max", concurrency: 64, count: counts.max }),
        ).perSecond ?? NaN;
    const max = await interleave(counts.maxRounds, maxVariants);
    const p99 = percentile(latencies.ours, 99);
    const failures = errors.length > 0 ? ` FAILED REQUESTS: ${errors.join("; ")}` : "";
    return [
      {
        measure: `${spec.label} p50 at ${spec.rate} req/s`,
        ours: percentile(latencies.ours, 50),
        floor: percentile(latencies.floor, 50),
        unit: "ms",
        aim: "—",
        met: null,
      },
      {
        measure: `${spec.label} p99 at ${spec.rate} req/s`,
        ours: p99,
        floor: percentile(latencies.floor, 99),
        unit: "ms",
        aim: `≤ ${spec.aim.p99Ms} ms`,
        met: options.smoke ? null : p99 <= spec.aim.p99Ms && errors.length === 0,
        note: `${latencies.ours.length} requests each, load from a separate process${failures}`,
      },
      ...(durable
        ? [
            ratioRow(options, {
              measure: `${spec.label} p99 at ${spec.rate} req/s vs durable write alone`,
              ours: p99,
              floor: percentile(latencies.durable, 99),
              unit: "ms",
              ...(spec.aim.p99VsDurable !== undefined ? { maxRatio: spec.aim.p99VsDurable } : {}),
              note: `${durable.note}; its p50 ${percentile(latencies.durable, 50).toFixed(2)} ms`,
            }),
          ]
        : []),
      ratioRow(options, {
        measure: `${spec.label} max throughput (64 in flight)`,
        ours: median(max.ours ?? []),
        floor: median(max.floor ?? []),
        unit: "req/s",
        minRatio: spec.aim.minRatio,
        note: spec.floorNote,
      }),
      ...(durable
        ? [
            ratioRow(options, {
              measure: `${spec.label} max throughput vs durable write alone`,
              ours: median(max.ours ?? []),
              floor: median(max.durable ?? []),
              unit: "req/s",
              note: durable.note,
            }),
          ]
        : []),
    ];
  } finally {
    await driver.close();
  }
}

/** Starts a webhook-backend child and waits for it to be ready. */
export async function startBackend(
  config: BackendConfig,
): Promise<{ ready: BackendReady; close(): Promise<void> }> {
  const child = forkBenchChild(new URL("./webhook-backend.ts", import.meta.url), [JSON.stringify(config)]);
  const ready = await nextMessage(child, (m) =>
    (m as { ready?: boolean }).ready ? (m as BackendReady) : undefined,
  );
  return { ready, close: () => endChild(child, 30_000) };
}
