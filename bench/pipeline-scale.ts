/**
 * Throughput over opencode servers (issue 23 items 4–5), not a CI test: `pnpm bench [--smoke]
 * pipeline-scale`. 30 approved tasks at once (one dev round that writes a file, one passing
 * review, the scripted model answering at once) through ingress, dev, reviewer and notifier as
 * processes with the defaults a deployment has (8 runs per server per process), first over one
 * opencode server, then over two (a fresh world each, one warm-up task first). Printed per case:
 * tasks per minute (first approval → last review passed), approval → push p50/p99, where a task's
 * time went (session opening, runs, waiting for a slot, git, ours) and the machine's CPU per task
 * (every core, so it shows when the machine, not the servers, is the limit). `--smoke`: 3 tasks.
 * BENCH_SCALE_SWEEP_MS=500 runs every sweep that often (a job finishing between a sweep's read and
 * its write is then likely); BENCH_SCALE_RUNS=5 repeats the whole bench, each run a fresh world.
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { DATABASE_URL, REDIS_URL } from "./lib/bench-env.ts";
import { benchMain, median, percentile, type Bench, type BenchRow } from "./lib/bench-harness.ts";
import { runApprovedBatch } from "./lib/pipeline-batch.ts";
import type { TaskSplit } from "./lib/pipeline-timeline.ts";
import { PipelineHarness } from "../test/pipeline/pipeline-harness.ts";

const SCALE_AIM = 1.6;
const OPENING_AIM = 0.2;

/** Busy and total CPU time of the whole machine so far, in seconds (/proc/stat, every core). */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, v) => sum + v, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle + iowait
  return { busy: (total - idle) / 100, total: total / 100 };
}

interface ScaleCase {
  servers: number;
  tasksPerMinute: number;
  toPush: number[];
  splits: TaskSplit[];
  cpuPerTask: number;
  /** Share of the machine's CPU in use over the batch, 0..1. */
  busy: number;
  failed: number;
}

/** Every repair's interval (and grace) at `ms`, for BENCH_SCALE_SWEEP_MS; the defaults when unset. */
function sweepEnv(ms: string | undefined): Record<string, string> {
  if (!ms) return {};
  const grace = String(2 * Number(ms));
  return {
    PIPELINE_SWEEP_INTERVAL_MS: ms,
    PIPELINE_SWEEP_GRACE_MS: grace,
    ANALYST_SWEEP_INTERVAL_MS: ms,
    ANALYST_SWEEP_GRACE_MS: grace,
    NOTIFIER_STALE_SWEEP_INTERVAL_MS: ms,
  };
}

async function runCase(servers: number, size: number): Promise<ScaleCase> {
  const chats = Array.from({ length: size + 1 }, (_, i) => 300 + i);
  const h = new PipelineHarness();
  try {
    await h.start(
      ["ingress", "notifier"],
      { TELEGRAM_ALLOWED_CHAT_IDS: chats.join(","), DEV_CONCURRENCY: "16", REVIEWER_CONCURRENCY: "16", ...sweepEnv(process.env["BENCH_SCALE_SWEEP_MS"]) },
      { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL },
      { servers },
    );
    // Split timings are logged at debug by the services that run agents and git.
    const [dev, reviewer] = await Promise.all([h.startService("dev", { LOG_LEVEL: "debug" }), h.startService("reviewer", { LOG_LEVEL: "debug" })]);
    h.running.set("dev", dev).set("reviewer", reviewer);
    // The first task pays tsx and opencode start-up costs no later one does.
    await runApprovedBatch(h, `s${servers}w`, 1, chats.slice(0, 1));
    const cpuBefore = machineCpu();
    const started = Date.now();
    const batch = await runApprovedBatch(h, `s${servers}b`, size, chats.slice(1), 600_000);
    const events = await h.database.db.prisma.taskEvent.findMany({
      where: { taskId: { in: batch.taskIds }, type: { in: ["user.approved", "dev.finished", "review.passed"] } },
    });
    const cpuAfter = machineCpu();
    const at = (taskId: number, type: string) => events.find((e) => e.taskId === taskId && e.type === type)?.createdAt.getTime();
    const ends = batch.taskIds.map((id) => at(id, "review.passed")).filter((t): t is number => t !== undefined);
    const firstApproval = Math.min(...batch.taskIds.map((id) => at(id, "user.approved") ?? started));
    const toPush = batch.taskIds.flatMap((id) => {
      const approved = at(id, "user.approved");
      const pushed = at(id, "dev.finished");
      return approved !== undefined && pushed !== undefined ? [pushed - approved] : [];
    });
    const busyCpu = cpuAfter.busy - cpuBefore.busy;
    return {
      servers,
      tasksPerMinute: ends.length === 0 ? 0 : ends.length / ((Math.max(...ends) - firstApproval) / 60_000),
      toPush,
      splits: batch.splits,
      cpuPerTask: busyCpu / size,
      busy: busyCpu / (cpuAfter.total - cpuBefore.total),
      failed: batch.failed,
    };
  } finally {
    await h.stop();
  }
}

function describe(c: ScaleCase): string {
  const sum = (pick: (s: TaskSplit) => number) => c.splits.reduce((total, s) => total + pick(s), 0);
  const wall = sum((s) => s.wall);
  const share = (pick: (s: TaskSplit) => number) => `${Math.round((100 * sum(pick)) / wall)}%`;
  return (
    `${c.servers} server(s): ${c.tasksPerMinute.toFixed(1)} tasks/min, approval → push p50 ${Math.round(median(c.toPush))} / ` +
    `p99 ${Math.round(percentile(c.toPush, 99))} ms; of a task's time: opening ${share((s) => s.opening)}, runs ${share((s) => s.runs)}, ` +
    `model ${share((s) => s.model)}, waiting ${share((s) => s.waiting)}, git ${share((s) => s.git)}, ours ${share((s) => s.ours)}; ` +
    `CPU ${c.cpuPerTask.toFixed(2)} s per task, machine ${Math.round(100 * c.busy)}% busy (${cpus().length} cores)`
  );
}

const bench: Bench = async (options) => {
  const size = options.smoke ? 3 : 30;
  const runs = Number(process.env["BENCH_SCALE_RUNS"] ?? 1);
  let one: ScaleCase | undefined;
  let two: ScaleCase | undefined;
  let failed = 0;
  for (let run = 1; run <= runs; run++) {
    one = await runCase(1, size);
    two = await runCase(2, size);
    failed += one.failed + two.failed;
    console.log(`run ${run} of ${runs}, sweeps ${process.env["BENCH_SCALE_SWEEP_MS"] ?? "default"}: ${one.failed + two.failed} of ${2 * size} tasks failed`);
    for (const c of [one, two]) console.log(describe(c));
  }
  if (!one || !two) throw new Error("BENCH_SCALE_RUNS must be at least 1");
  const met = (ok: boolean) => (options.smoke ? null : ok);
  const opening = (c: ScaleCase) => {
    const wall = c.splits.reduce((total, s) => total + s.wall, 0);
    return c.splits.reduce((total, s) => total + s.opening, 0) / wall;
  };
  const ratio = two.tasksPerMinute / one.tasksPerMinute;
  const rows: BenchRow[] = [
    {
      measure: `tasks per minute, ${size} at once, 2 opencode servers (floor: 1 server)`,
      ours: two.tasksPerMinute,
      floor: one.tasksPerMinute,
      unit: "tasks/min",
      aim: `≥ ${SCALE_AIM}× floor`,
      met: met(ratio >= SCALE_AIM),
      note:
        `machine ${Math.round(100 * one.busy)}% busy with 1 server, ${Math.round(100 * two.busy)}% with 2; ` +
        `CPU per task ${one.cpuPerTask.toFixed(2)} s / ${two.cpuPerTask.toFixed(2)} s: where the machine is saturated, a second server cannot add throughput`,
    },
    ...[one, two].map((c) => ({
      measure: `session opening share of a task's time, ${size} at once, ${c.servers} server(s)`,
      ours: 100 * opening(c),
      floor: null,
      unit: "%",
      aim: `≤ ${100 * OPENING_AIM}%`,
      met: met(opening(c) <= OPENING_AIM),
    })),
    { measure: `pipeline-scale tasks failed, ${runs} run(s)`, ours: failed, floor: null, unit: "tasks", aim: "0", met: met(failed === 0) },
  ];
  return rows;
};

export const run = bench;
benchMain(import.meta.url, bench);
