/**
 * Pipeline overhead (issue 11 item 11), not a CI test: `pnpm tsx bench/pipeline-overhead.ts [--smoke]`.
 * Approved tasks run to a reviewed, pushed branch (one review round) through the real services as
 * separate processes, a real opencode and the scripted model answering at once — 1 task at a time,
 * then 10 at a time. Each task's wall time (approval → review passed) is split into model time
 * (the scripted model's replies), opencode time (the agent runs minus the model), git time (every
 * git command the dev and reviewer ran for the task's repository) and our orchestration: the rest
 * (queue hops, transactions, notifications, workspace bookkeeping). The floor is a bare BullMQ
 * hop (add → handler) on the same Redis, measured in the same run.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Queue, Worker } from "bullmq";
import pg from "pg";
import { DATABASE_URL, REDIS_URL, benchId } from "./lib/bench-env.ts";
import { benchMain, median, percentile, type Bench, type BenchRow } from "./lib/bench-harness.ts";
import { endChild, nextMessage } from "./lib/child-process.ts";
import { PipelineHarness } from "../test/pipeline/pipeline-harness.ts";
import { runApprovedBatch } from "./lib/pipeline-batch.ts";
import type { TaskSplit } from "./lib/pipeline-timeline.ts";

/** approved → dev run, dev finished → review run, review passed → success: the queue hops of one round. */
const HOPS_PER_TASK = 3;
const HOP_AIM_MS = 300;
/** Issue 22 item 4: a step's result committed → the next step's handler running. */
const STAGE_HOP_AIM_MS = 10;
/**
 * Where a stage hop's time goes (issue 22.4, traced per step). Measured at load 17–20 on 2 cores,
 * 1 at a time: ours 21.5 ms p50 vs 9.6 ms for the commit + hop here, 12.6 ms to a worker in
 * another process; parts 13 ms before the add, 3 ms to BullMQ's take, 4 ms to the handler.
 */
const HOP_ACCOUNT =
  "No timer lies on the path: the transition's group commit flushes on a microtask, the follow-ups are " +
  "enqueued right after the commit (nothing awaited between), the worker is woken by BullMQ's marker " +
  "(drainDelay only bounds the blocking call), no limiter or delayed job. Before the add (the most): " +
  "our statement (task, event, notice and outbox rows; in one process min 2.5 ms vs 1.3 ms for a one-row " +
  "commit) and the enqueue of the job with its notice (two queues, min 1.1 ms). After it: BullMQ in another " +
  "process (at concurrency > 1 two moveToActive round trips before the handler) — each process woken " +
  "costs ms under load, which the in-process floor does not pay; the cross-process floor does";
const TASK_AIM_MS = 2_000;

interface Split {
  wall: number;
  model: number;
  opencode: number;
  git: number;
  orchestration: number;
  /** Each stage hop of the task: a step's result committed → the next step's job started. */
  hops: number[];
  hopParts: TaskSplit["hopParts"];
}

/** The dev and reviewer workers' concurrency here, and the cross-process floor's worker's. */
const CONCURRENCY = 10;

interface HopFloors {
  /** A bare BullMQ hop (add → handler) in this process. */
  bare: number;
  /** One synchronous Postgres commit (one row), then that hop: what ours pays at the least. */
  committed: number;
  /** The same commit, then the hop to a bare worker in another process (plain node, CONCURRENCY). */
  apart: number;
}

/** The hop floors (median of `samples` each), measured alike and interleaved. */
async function hopFloors(samples: number): Promise<HopFloors> {
  const prefix = benchId("hop");
  const connection = { url: REDIS_URL };
  const queue = new Queue("hop", { connection, prefix });
  const apartQueue = new Queue("hop-apart", { connection, prefix });
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  // A real table: a commit that wrote only a temp table need not wait for a WAL flush.
  await db.query(`CREATE SCHEMA ${prefix}; CREATE TABLE ${prefix}.hop_commits (id int)`);
  // Epoch ms with sub-ms precision, comparable across processes on this host.
  const now = () => performance.timeOrigin + performance.now();
  const started = new Map<string, number>();
  const worker = new Worker("hop", async (job) => void started.set(job.id!, now()), { connection, prefix });
  const child = fork(fileURLToPath(new URL("./lib/bare-worker.mjs", import.meta.url)), [REDIS_URL, prefix, "hop-apart", String(CONCURRENCY), "report"], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  child.on("message", (m: { started?: string; at?: number }) => void (m.started && started.set(m.started, m.at!)));
  await Promise.all([worker.waitUntilReady(), nextMessage(child, (m) => (m === "ready" ? true : undefined))]);
  const results: Record<keyof HopFloors, number[]> = { bare: [], committed: [], apart: [] };
  for (let i = 0; i < samples; i++) {
    for (const kind of ["bare", "committed", "apart"] as const) {
      const id = `${kind}${i}`;
      const at = now();
      if (kind !== "bare") await db.query(`INSERT INTO ${prefix}.hop_commits VALUES ($1)`, [i]);
      await (kind === "apart" ? apartQueue : queue).add("hop", { i }, { jobId: id });
      while (!started.has(id)) await new Promise((resolve) => setTimeout(resolve, 1));
      results[kind].push(started.get(id)! - at);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  await Promise.all([worker.close(), endChild(child)]);
  await Promise.all([queue, apartQueue].map(async (q) => (await q.obliterate({ force: true }), await q.close())));
  await db.query(`DROP SCHEMA ${prefix} CASCADE`);
  await db.end();
  return { bare: median(results.bare), committed: median(results.committed), apart: median(results.apart) };
}

function toSplit(t: TaskSplit): Split {
  const opencode = t.runs + t.opening + t.waiting;
  return { wall: t.wall, model: t.model, opencode, git: t.git, orchestration: t.wall - t.model - opencode - t.git, hops: t.hops, hopParts: t.hopParts };
}

async function runBatch(h: PipelineHarness, batch: number, size: number, chats: number[]): Promise<Split[]> {
  const result = await runApprovedBatch(h, `b${batch}`, size, chats);
  failures += result.failed;
  return result.splits.map(toSplit);
}

let failures = 0;

function table(label: string, splits: Split[]): string {
  const cols = ["wall", "model", "opencode", "git", "orchestration"] as const;
  const cell = (k: (typeof cols)[number]) => `${Math.round(median(splits.map((s) => s[k])))}/${Math.round(percentile(splits.map((s) => s[k]), 99))}`;
  return `${label.padEnd(14)} ${cols.map((k) => `${k} ${cell(k)}`.padEnd(24)).join("")}`;
}

const bench: Bench = async (options) => {
  const sizes = options.smoke ? { sequential: 1, parallel: 2, rounds: 1 } : { sequential: 5, parallel: 10, rounds: 2 };
  const chats = Array.from({ length: 100 }, (_, i) => 300 + i);
  const h = new PipelineHarness();
  const rows: BenchRow[] = [];
  try {
    await h.start(
      ["ingress", "notifier"],
      { TELEGRAM_ALLOWED_CHAT_IDS: chats.join(","), DEV_CONCURRENCY: String(CONCURRENCY), REVIEWER_CONCURRENCY: String(CONCURRENCY), OPENCODE_MAX_PROMPTS_PER_SERVER: "20" },
      { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL },
    );
    // git timing is logged at debug by the services that run git.
    const [dev, reviewer] = await Promise.all([h.startService("dev", { LOG_LEVEL: "debug" }), h.startService("reviewer", { LOG_LEVEL: "debug" })]);
    h.running.set("dev", dev).set("reviewer", reviewer);
    const floors = await hopFloors(options.smoke ? 5 : 50);
    const floor = floors.bare;

    let batch = 0;
    let free = 0;
    const take = (n: number) => chats.slice(free, (free += n));
    // Warm-up: the first task pays tsx and opencode start-up costs no later one does.
    await runBatch(h, batch++, 1, take(1));
    const one: Split[] = [];
    for (let i = 0; i < sizes.sequential; i++) one.push(...(await runBatch(h, batch++, 1, take(1))));
    const ten: Split[] = [];
    for (let i = 0; i < sizes.rounds; i++) ten.push(...(await runBatch(h, batch++, sizes.parallel, take(sizes.parallel))));

    console.log("ms, p50/p99 per task (approval → review passed)");
    console.log(table("1 at a time", one));
    console.log(table(`${sizes.parallel} at a time`, ten));

    const hop = (splits: Split[]) => median(splits.map((s) => s.orchestration / HOPS_PER_TASK));
    const met = (ok: boolean) => (options.smoke ? null : ok);
    for (const [label, splits] of [["1", one], [String(sizes.parallel), ten]] as const) {
      const value = hop(splits);
      rows.push({ measure: `pipeline orchestration per stage hop p50, ${label} at a time`, ours: value, floor, unit: "ms", aim: `≤ ${HOP_AIM_MS} ms`, met: met(value <= HOP_AIM_MS), note: "floor: a bare BullMQ add → handler hop" });
    }
    for (const [label, splits] of [["1", one], [String(sizes.parallel), ten]] as const) {
      const hops = splits.flatMap((s) => s.hops);
      const value = median(hops);
      const part = (k: keyof TaskSplit["hopParts"][number]) => Math.round(median(splits.flatMap((s) => s.hopParts.map((p) => p[k]))));
      rows.push({
        measure: `stage hop p50 (result committed → next handler running), ${label} at a time`,
        ours: value,
        floor: floors.committed,
        unit: "ms",
        aim: `≤ ${STAGE_HOP_AIM_MS} ms`,
        met: label === "1" ? met(value <= STAGE_HOP_AIM_MS) : null,
        note:
          `floor: one synchronous commit, then a bare BullMQ hop in this process (bare hop alone ${floors.bare.toFixed(2)} ms; ` +
          `the commit and a hop to a bare worker in another process at concurrency ${CONCURRENCY}, as ours cross: ${floors.apart.toFixed(2)} ms). ` +
          `p99 ${Math.round(percentile(hops, 99))} ms over ${hops.length} hops; p50 parts: event → job added ${part("added")} ms, ` +
          `added → taken by BullMQ ${part("taken")} ms, taken → handler ${part("started")} ms. ${HOP_ACCOUNT}`,
      });
    }
    const p99 = percentile(ten.map((s) => s.orchestration), 99);
    rows.push({ measure: `pipeline orchestration per task p99, ${sizes.parallel} at a time`, ours: p99, floor: null, unit: "ms", aim: `≤ ${TASK_AIM_MS} ms`, met: met(p99 <= TASK_AIM_MS) });
    rows.push({ measure: `pipeline wall per task p50, ${sizes.parallel} at a time`, ours: median(ten.map((s) => s.wall)), floor: null, unit: "ms", aim: "—", met: null });
    rows.push({ measure: "pipeline tasks failed", ours: failures, floor: null, unit: "tasks", aim: "0", met: met(failures === 0) });
  } finally {
    await h.stop();
  }
  return rows;
};

export const run = bench;
benchMain(import.meta.url, bench);
