import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { QUEUE } from "@ratatoskr/contracts";
import {
  createFollowUpDispatcher,
  createRepositories,
  DialogueTurnRepository,
  type FollowUpDispatcher,
  type Repositories,
} from "@ratatoskr/db";
import { createLogger, createQueues, createRedisConnection, type QueueSet, type Redis } from "@ratatoskr/runtime";
import { startOwnRedis, type OwnRedis } from "@ratatoskr/testkit";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepStep } from "@ratatoskr/pipeline";
import { plannerStep, sweepAnalyses } from "../src/maintenance/analysis-sweeper.ts";

const logger = createLogger({ service: "analysis-sweeper-test", level: "silent" });
const PREFIX = "sweeper-test";
let database: TestDatabase;
let repos: Repositories;
let redis: OwnRedis;
let producer: Redis;
let queues: QueueSet;
let dispatcher: FollowUpDispatcher;

beforeAll(async () => {
  database = await createTestDatabase();
  repos = createRepositories(database.db.prisma);
  redis = await startOwnRedis();
  producer = createRedisConnection(redis.url, "producer", { logger });
  queues = createQueues({ connection: producer, prefix: PREFIX, logger });
  dispatcher = createFollowUpDispatcher({ prisma: database.db.prisma, enqueue: async (r) => void (await queues.enqueue(r)) });
});
afterAll(async () => {
  await queues?.close();
  producer?.disconnect();
  await redis?.stop();
  await database?.drop();
});

const transition: Parameters<typeof sweepAnalyses>[0]["transition"] = async (taskId, event, options) => {
  const applied = await repos.applyTransition(taskId, event, options);
  await dispatcher.dispatch(applied.followUps);
  return applied;
};

/** A person's message: a stored turn and, unless one runs, an analysis job (as ingress does). */
async function message(taskId: number, text: string) {
  return transition(taskId, { type: "turn.received" }, {
    alongside: (tx) => new DialogueTurnRepository(tx).add({ taskId, role: "user", text }).then(() => undefined),
  });
}

async function taskInAnalysis(chatId: number) {
  const task = await repos.tasks.createTelegramTask({ chatId, maxTurns: 5, maxRounds: 3 });
  await message(task.id, "please add a health endpoint");
  return task.id;
}

async function analystJobId(taskId: number): Promise<string> {
  const rows = await database.db.prisma.followUp.findMany({ where: { taskId, queue: QUEUE.analyst }, orderBy: { id: "desc" } });
  return rows[0]!.jobId;
}

const sweep = () => sweepAnalyses({ prisma: database.db.prisma, queues, dispatcher, transition, logger, graceMs: 0 });

describe("analysis sweeper (Postgres is the truth, Redis can be lost)", () => {
  it("enqueues again an analysis whose job a wiped Redis lost, under the same id", async () => {
    const taskId = await taskInAnalysis(7_001);
    const jobId = await analystJobId(taskId);
    expect(await queues.queues.analyst.getJobState(jobId)).toBe("waiting");

    await redis.wipe();
    expect(await queues.queues.analyst.getJobState(jobId)).toBe("unknown");
    expect(await sweep()).toEqual({ requeued: 1, released: 0 });

    const job = await queues.queues.analyst.getJob(jobId);
    expect(job?.data).toMatchObject({ taskId, kind: "turn" });
    expect(await queues.queues.analyst.getJobState(jobId)).toBe("waiting");
    // Present again: the next pass leaves it alone.
    expect(await sweep()).toEqual({ requeued: 0, released: 0 });
    expect((await repos.tasks.findById(taskId))?.analysing).toBe(true);
    // Done with it: the next test's workers must not find this job first.
    await transition(taskId, { type: "analyst.failed", problem: "no-verdict" });
    await queues.queues.analyst.obliterate({ force: true });
  });

  it("releases an analysis whose worker was killed three times saying so, and analyses the pending message again unasked", async () => {
    const taskId = await taskInAnalysis(7_002);
    const jobId = await analystJobId(taskId);
    for (let kill = 1; kill <= 3; kill++) {
      const worker = await hangingWorker();
      expect(await worker.taken).toBe(jobId);
      await worker.kill();
    }
    // A fourth worker's stalled check finds the third stall: past the limit, the job fails.
    const checker = await hangingWorker();
    await until(async () => (await queues.queues.analyst.getJobState(jobId)) === "failed");
    await checker.kill();

    expect(await sweep()).toEqual({ requeued: 0, released: 1 });
    const events = await repos.events.list(taskId);
    // The true reason: the worker died, not "the agent server could not be reached".
    expect(events.at(-1)).toMatchObject({ type: "analyst.failed", payload: { problem: "worker-died", failedInARow: 1 } });
    const told = await database.db.prisma.notification.findMany({ where: { taskId } });
    expect(told.map((n) => [n.template, n.params])).toEqual([
      ["task.analyst-error", { taskId, problem: "worker-died", then: "retrying" }],
    ]);
    // The pending message is analysed again without the person writing.
    const next = await analystJobId(taskId);
    expect(next).not.toBe(jobId);
    expect(await queues.queues.analyst.getJobState(next)).toBe("waiting");
    expect(await repos.tasks.findById(taskId)).toMatchObject({ status: "collecting", analysing: true, pendingTurns: 1 });
  }, 60_000);
});

const CHILD = fileURLToPath(new URL("./support/hanging-analyst-worker.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

async function hangingWorker(): Promise<{ taken: Promise<string>; kill(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CHILD], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: redis.url, QUEUE_PREFIX: PREFIX },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let buffer = "";
  const taken = new Promise<string>((resolve) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /"taken":"([^"]+)"/.exec(buffer);
      if (match) resolve(match[1]!);
    });
  });
  const exited = once(child, "exit");
  return {
    taken,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A Gitea `/agent plan` running its planner, whose job was queued. */
async function commandPlanning(commentId: number) {
  const task = await database.db.prisma.task.create({
    data: {
      source: "gitea",
      status: "running",
      round: 1,
      repoOwner: "acme",
      repoName: "web",
      targetType: "issue",
      targetNumber: 1,
      targetKey: "acme/web#1",
      commandKind: "plan",
      requesterLogin: "alice",
      commentId: BigInt(commentId),
      maxTurns: 0,
      maxRounds: 3,
    },
  });
  const jobId = `${task.id}-analyst-2`;
  await database.db.prisma.followUp.create({ data: { taskId: task.id, queue: QUEUE.analyst, jobId, data: { v: 1, taskId: task.id, kind: "plan" }, createdAt: new Date(), dispatchedAt: new Date() } });
  return { taskId: task.id, jobId };
}

describe("planner sweep (a Gitea command's plan, Redis lost)", () => {
  const sweepPlanner = (step = plannerStep({ prisma: database.db.prisma, queues, transition })) =>
    sweepStep({ dispatcher, logger, graceMs: 0 }, step);

  it("enqueues again a planner job a wiped Redis lost, under the same id", async () => {
    const { taskId, jobId } = await commandPlanning(9_001);
    await redis.wipe();
    expect(await sweepPlanner()).toEqual({ requeued: 1, released: 0 });
    expect((await queues.queues.analyst.getJob(jobId))?.data).toMatchObject({ taskId, kind: "plan" });
    await database.db.prisma.task.update({ where: { id: taskId }, data: { status: "success" } });
  });

  it("fails a command whose planner job ended without reporting back, saying so and how to retry", async () => {
    const { taskId } = await commandPlanning(9_002);
    const step = plannerStep({ prisma: database.db.prisma, queues, transition });
    const result = await sweepPlanner({ ...step, waiting: async () => (await step.waiting()).filter((s) => s.taskId === taskId), jobState: async () => "failed" });
    expect(result).toEqual({ requeued: 0, released: 1 });
    const task = await database.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task.status).toBe("failed");
    expect(task.failureReason).toMatch(/^the planner ended without reporting back; /);
  });
});
