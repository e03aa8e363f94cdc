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
import { Queue, Worker } from "bullmq";
import { DATABASE_URL, REDIS_URL, benchId } from "./lib/bench-env.ts";
import { benchMain, median, percentile, type Bench, type BenchRow } from "./lib/bench-harness.ts";
import { reply } from "../packages/testkit/src/index.ts";
import { DEV, PipelineHarness, REVIEWER } from "../test/pipeline/pipeline-harness.ts";

/** approved → dev run, dev finished → review run, review passed → success: the queue hops of one round. */
const HOPS_PER_TASK = 3;
const HOP_AIM_MS = 300;
const TASK_AIM_MS = 2_000;

interface Split {
  wall: number;
  model: number;
  opencode: number;
  git: number;
  orchestration: number;
}

async function bareHopFloor(samples: number): Promise<number> {
  const prefix = benchId("hop");
  const connection = { url: REDIS_URL };
  const queue = new Queue("hop", { connection, prefix });
  const added = new Map<string, number>();
  const hops: number[] = [];
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const worker = new Worker(
    "hop",
    async (job) => {
      hops.push(performance.now() - (added.get(job.id!) ?? NaN));
      if (hops.length === samples) done();
    },
    { connection, prefix },
  );
  await worker.waitUntilReady();
  for (let i = 0; i < samples; i++) {
    added.set(`h${i}`, performance.now());
    await queue.add("hop", { i }, { jobId: `h${i}` });
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await finished;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return median(hops);
}

/** Sum of the `ms` of the "git command" log lines for one repository, from the services' output. */
function gitMs(output: string, repo: string): number {
  let total = 0;
  for (const line of output.split("\n")) {
    if (!line.includes('"git command"') || !line.includes(`"repo":"${repo}"`)) continue;
    const entry = JSON.parse(line) as { ms?: number };
    total += entry.ms ?? 0;
  }
  return total;
}

/** Sum of `openMs` of the "agent run started" lines of the task's sessions. */
function openingMs(output: string, sessions: ReadonlySet<string | null>): number {
  let total = 0;
  for (const line of output.split("\n")) {
    if (!line.includes('"agent run started"')) continue;
    const entry = JSON.parse(line) as { sessionId?: string; openMs?: number };
    if (entry.sessionId && sessions.has(entry.sessionId)) total += entry.openMs ?? 0;
  }
  return total;
}

async function splitOf(h: PipelineHarness, taskId: number, repo: string): Promise<Split> {
  const prisma = h.database.db.prisma;
  const events = await prisma.taskEvent.findMany({ where: { taskId }, orderBy: { version: "asc" } });
  const approved = events.find((e) => e.type === "user.approved")!.createdAt.getTime();
  const passed = events.find((e) => e.type === "review.passed")!.createdAt.getTime();
  const traces = await h.traces(taskId);
  const sessions = new Set(traces.map((t) => t.sessionId));
  const model = h.model.requests
    .filter((r) => sessions.has(r.sessionId ?? null))
    .reduce((sum, r) => sum + ((r.endedAt ?? r.receivedAt) - r.receivedAt), 0);
  const runs = traces.reduce((sum, t) => sum + ((t.endedAt?.getTime() ?? t.startedAt.getTime()) - t.startedAt.getTime()), 0);
  const output = ["dev", "reviewer"].map((name) => h.running.get(name)?.output() ?? "").join("\n");
  const git = gitMs(output, repo);
  // Before a run's trace starts, opencode boots the directory and creates (or readies) the session.
  const opening = openingMs(output, sessions);
  if (process.env["BENCH_TIMELINE"]) {
    const marks = [
      ...events.map((e) => [e.createdAt.getTime(), `event ${e.type}`] as const),
      ...traces.flatMap((t) => [[t.startedAt.getTime(), `${t.agent} run started`] as const, [t.endedAt?.getTime() ?? NaN, `${t.agent} run ended`] as const]),
      ...h.model.requests.filter((r) => sessions.has(r.sessionId ?? null)).map((r) => [r.receivedAt, `model asked (${r.system.includes(DEV) ? "dev" : "reviewer"})`] as const),
    ].sort((a, b) => a[0] - b[0]);
    console.log(`task ${taskId}:\n${marks.map(([at, what]) => `  +${at - approved} ms ${what}`).join("\n")}`);
  }
  const wall = passed - approved;
  const opencode = Math.max(0, runs - model) + opening;
  return { wall, model, opencode, git, orchestration: wall - model - opencode - git };
}

async function runBatch(h: PipelineHarness, batch: number, size: number, chats: number[]): Promise<Split[]> {
  const tasks = await Promise.all(
    Array.from({ length: size }, async (_, i) => {
      const repo = `bench/b${batch}t${i}`;
      const title = `Bench task ${batch}-${i}`;
      await h.repo(repo);
      h.model.addRule({
        match: { systemIncludes: DEV, promptIncludes: title },
        reply: [reply.write(`${repo}/bench.txt`, `${title}\n`), reply.json({ summary: "done", done: true })],
      });
      h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, findings: [] })] });
      const taskId = await h.approvedTask(chats[i]!, { title, repos: [repo] });
      return { taskId, repo };
    }),
  );
  const deadline = Date.now() + 300_000;
  for (;;) {
    const statuses = await Promise.all(tasks.map(async (t) => (await h.task(t.taskId)).status));
    if (statuses.every((s) => s === "success")) break;
    const stuck = statuses.find((s) => s === "failed" || s === "cancelled");
    if (stuck || Date.now() > deadline) throw new Error(`batch ${batch}: ${statuses.join(", ")}\n${h.logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Promise.all(tasks.map((t) => splitOf(h, t.taskId, t.repo)));
}

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
      { TELEGRAM_ALLOWED_CHAT_IDS: chats.join(","), DEV_CONCURRENCY: "10", REVIEWER_CONCURRENCY: "10", OPENCODE_MAX_PROMPTS_PER_SERVER: "20" },
      { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL },
    );
    // git timing is logged at debug by the services that run git.
    const [dev, reviewer] = await Promise.all([h.startService("dev", { LOG_LEVEL: "debug" }), h.startService("reviewer", { LOG_LEVEL: "debug" })]);
    h.running.set("dev", dev).set("reviewer", reviewer);
    const floor = await bareHopFloor(options.smoke ? 5 : 50);

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
    const p99 = percentile(ten.map((s) => s.orchestration), 99);
    rows.push({ measure: `pipeline orchestration per task p99, ${sizes.parallel} at a time`, ours: p99, floor: null, unit: "ms", aim: `≤ ${TASK_AIM_MS} ms`, met: met(p99 <= TASK_AIM_MS) });
    rows.push({ measure: `pipeline wall per task p50, ${sizes.parallel} at a time`, ours: median(ten.map((s) => s.wall)), floor: null, unit: "ms", aim: "—", met: null });
  } finally {
    await h.stop();
  }
  return rows;
};

export const run = bench;
benchMain(import.meta.url, bench);
