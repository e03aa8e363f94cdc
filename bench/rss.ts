/**
 * Memory of the all-in-one (all six services in one process, as `pnpm start` runs it: the tsc
 * build under plain node with the start script's variables and node flags, Bull Board enabled but
 * not opened) against a bare BullMQ worker (plain node, one no-op worker): RSS idle, and after 10k
 * notify jobs (each a real handler run: a notification that does not exist is looked up and
 * skipped). Each figure is the median of 5 samples a second apart, taken once the process has
 * settled for 15 s: V8 gives back start-up's spare heap pages at its first idle clean-up (about 8 s
 * after start), so a sample at 5 s measured start-up's peak rather than an idle process (it read
 * 1.43–1.46× where the settled process reads about 1.3×). `--smoke` runs the all-in-one from
 * source under tsx (no build) with 200 jobs and short waits, so its numbers include tsx.
 * `pnpm tsx bench/rss.ts [--smoke]`
 */
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { JOB_CATALOG } from "../packages/contracts/src/index.ts";
import { defaultJobOptions } from "../packages/runtime/src/index.ts";
import { FakeTelegram } from "../packages/testkit/src/index.ts";
import { benchDatabase, benchId, DATABASE_URL, deletePrefix, REDIS_URL } from "./lib/bench-env.ts";
import { endChild, nextMessage } from "./lib/child-process.ts";
import {
  benchMain,
  interleave,
  median,
  ratioRow,
  type BenchOptions,
  type BenchRow,
} from "./lib/bench-harness.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const QUEUE = "notify" as const;
const MB = 1024 * 1024;
const SAMPLES = 5;

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb * 1024;
}

/**
 * The variables and node flags `pnpm start` launches the all-in-one with
 * (`A=1 B=2 exec node --flag services/all-in-one/dist/main.js`), so the bench measures that.
 */
function launcher(): { env: Record<string, string>; flags: string[] } {
  const { scripts } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    scripts: Record<string, string>;
  };
  const match = /((?:\w+=\S+\s+)*)exec node ((?:--\S+\s+)*)services\/all-in-one\/dist\/main\.js/.exec(
    scripts["start"] ?? "",
  );
  if (!match)
    throw new Error("package.json's start script no longer runs node services/all-in-one/dist/main.js");
  const words = (text: string | undefined) => (text ?? "").split(/\s+/).filter(Boolean);
  const env = Object.fromEntries(
    words(match[1]).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
  return { env, flags: words(match[2]) };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function until(what: string, check: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check().catch(() => false))) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Queues `count` notify jobs and waits until none is waiting, active or delayed. */
async function runJobs(prefix: string, count: number): Promise<void> {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUE, { connection, prefix, defaultJobOptions: defaultJobOptions(QUEUE) });
  try {
    for (let i = 0; i < count; i += 1000) {
      const n = Math.min(1000, count - i);
      await queue.addBulk(
        Array.from({ length: n }, (_, k) => ({
          name: JOB_CATALOG[QUEUE].jobName,
          data: { v: 1 as const, kind: "message" as const, notificationId: 1_000_000 + i + k },
          opts: { jobId: `rss-${i + k}` },
        })),
      );
    }
    await until(
      "the jobs to finish",
      async () => {
        const counts = await queue.getJobCounts("waiting", "active", "delayed", "prioritized");
        return Object.values(counts).every((c) => c === 0);
      },
      600_000,
    );
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    connection.disconnect();
  }
}

interface Measured {
  idle: number;
  /** Not measured in a round that runs no jobs. */
  afterJobs: number | undefined;
}

/** The median of `SAMPLES` RSS readings a second apart (a tenth of that in smoke mode). */
async function settledRss(pid: number, gapMs: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
    readings.push(rssBytes(pid));
  }
  return median(readings);
}

/** Idle RSS after `settleMs`, then (when `jobs` > 0) RSS once they ran and `settleMs` passed again. */
async function measure(
  child: ChildProcess,
  prefix: string,
  jobs: number,
  settleMs: number,
): Promise<Measured> {
  const gapMs = settleMs / 15;
  await new Promise((r) => setTimeout(r, settleMs));
  const idle = await settledRss(child.pid!, gapMs);
  if (jobs === 0) return { idle, afterJobs: undefined };
  await runJobs(prefix, jobs);
  await new Promise((r) => setTimeout(r, settleMs));
  return { idle, afterJobs: await settledRss(child.pid!, gapMs) };
}

async function bareWorker(prefix: string, jobs: number, settleMs: number): Promise<Measured> {
  const child = fork(
    fileURLToPath(new URL("./lib/bare-worker.mjs", import.meta.url)),
    [REDIS_URL, prefix, QUEUE, "8"],
    {
      cwd: ROOT,
      execArgv: [],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  try {
    await nextMessage(child, (m) => (m === "ready" ? true : undefined));
    return await measure(child, prefix, jobs, settleMs);
  } finally {
    await endChild(child);
  }
}

async function allInOne(
  options: BenchOptions,
  prefix: string,
  jobs: number,
  settleMs: number,
): Promise<Measured> {
  const { schema, drop } = await benchDatabase("rss");
  const telegram = await new FakeTelegram().start();
  const port = await freePort();
  const launch = launcher();
  const env = {
    ...process.env,
    ...launch.env,
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: "warn",
    HTTP_HOST: "127.0.0.1",
    HTTP_PORT: String(port),
    BULL_BOARD_PASSWORD: "rss-bench",
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.url,
    TELEGRAM_ALLOWED_CHAT_IDS: "1",
    // Nothing listens there: the analyst is idle in this bench, and start-up does not need it.
    OPENCODE_URL: `http://127.0.0.1:${await freePort()}`,
  };
  let child: ChildProcess;
  if (options.smoke) {
    child = fork(fileURLToPath(new URL("../services/all-in-one/src/main.ts", import.meta.url)), [], {
      cwd: ROOT,
      env,
      execArgv: [...launch.flags, "--import", "tsx", "--conditions=ratatoskr-source"],
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
  } else {
    execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: ROOT, stdio: "inherit" });
    child = fork(fileURLToPath(new URL("../services/all-in-one/dist/main.js", import.meta.url)), [], {
      cwd: ROOT,
      env,
      execArgv: launch.flags,
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
  }
  try {
    // Live, not ready: readiness includes opencode, which this bench does not run.
    await until("the all-in-one to be up", async () => {
      if (child.exitCode !== null) throw new Error(`all-in-one exited ${child.exitCode}`);
      return (await fetch(`http://127.0.0.1:${port}/health/live`)).ok;
    });
    return await measure(child, prefix, jobs, settleMs);
  } finally {
    child.kill("SIGTERM");
    await endChild(child);
    await telegram.stop();
    await drop();
    await deletePrefix(prefix);
  }
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const jobs = options.smoke ? 200 : 10_000;
  const settleMs = options.smoke ? 1_500 : 15_000;
  // A bare worker's idle RSS alone swings 61–77 MB between runs: idle is measured in alternated
  // rounds (the first also runs the jobs) and the medians compared.
  const rounds = options.smoke ? 1 : 3;
  const measured = { floor: [] as Measured[], ours: [] as Measured[] };
  await interleave(rounds, {
    floor: async () => {
      const n = measured.floor.length === 0 ? jobs : 0;
      measured.floor.push(await bareWorker(benchId("rss_bare"), n, settleMs));
      return 0;
    },
    ours: async () => {
      const n = measured.ours.length === 0 ? jobs : 0;
      measured.ours.push(await allInOne(options, benchId("rss_all"), n, settleMs));
      return 0;
    },
  });
  const idle = (side: Measured[]) => median(side.map((m) => m.idle)) / MB;
  const afterJobs = (side: Measured[]) => (side[0]?.afterJobs ?? NaN) / MB;
  const mb = (side: Measured[]) => side.map((m) => (m.idle / MB).toFixed(1)).join(", ");
  const how = options.smoke ? "all-in-one under tsx (smoke)" : "all-in-one built, plain node";
  return [
    ratioRow(options, {
      measure: "RSS idle, all-in-one vs bare BullMQ worker",
      ours: idle(measured.ours),
      floor: idle(measured.floor),
      unit: "MB",
      maxRatio: 1.4,
      note: `${how}; medians of ${rounds} alternated rounds (ours ${mb(measured.ours)} MB; floor ${mb(measured.floor)} MB)`,
    }),
    ratioRow(options, {
      measure: `RSS after ${jobs.toLocaleString("en")} notify jobs`,
      ours: afterJobs(measured.ours),
      floor: afterJobs(measured.floor),
      unit: "MB",
    }),
  ];
}

benchMain(import.meta.url, run);
