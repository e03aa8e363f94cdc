import { QUEUE, type TaskEvent } from "@ratatoskr/contracts";
import {
  createFollowUpDispatcher,
  createRepositories,
  DialogueTurnRepository,
  type FollowUpDispatcher,
  type Repositories,
} from "@ratatoskr/db";
import { runningStep, sweepStep, type SweptStep } from "../../packages/pipeline/src/index.ts";
import { createLogger, createQueues, createRedisConnection, type QueueSet, type Redis } from "@ratatoskr/runtime";
import { startOwnRedis, type OwnRedis } from "@ratatoskr/testkit";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisStep } from "../../services/analyst/src/maintenance/analysis-sweeper.ts";
import { postmortemStep } from "../../services/postmortem/src/maintenance/postmortem-step.ts";
import { sendNotice } from "../../services/postmortem/src/notify/postmortem-notice.ts";

/**
 * Issue 23.1: a sweep reads the tasks waiting on a step, then asks BullMQ about each job. A job
 * that reports back between the two reads is "completed" by then, and a sweep that then writes on
 * a fresh read failed a healthy task. Each repair here meets that race: the job's own report lands
 * between the sweep's look and its write. The same sweep with no report (a job that truly ended
 * without reporting back) still settles the task, so the test tells the two apart.
 */
const logger = createLogger({ service: "sweep-races-test", level: "silent" });
let database: TestDatabase;
let repos: Repositories;
let redis: OwnRedis;
let producer: Redis;
let queues: QueueSet;
let dispatcher: FollowUpDispatcher;
let nextChat = 9_100;

beforeAll(async () => {
  database = await createTestDatabase();
  repos = createRepositories(database.db.prisma);
  redis = await startOwnRedis();
  producer = createRedisConnection(redis.url, "producer", { logger });
  queues = createQueues({ connection: producer, prefix: "sweep-races", logger });
  dispatcher = createFollowUpDispatcher({ prisma: database.db.prisma, enqueue: async (r) => void (await queues.enqueue(r)) });
});
afterAll(async () => {
  await queues?.close();
  producer?.disconnect();
  await redis?.stop();
  await database?.drop();
});

const transition = async (taskId: number, event: TaskEvent, options?: Parameters<Repositories["applyTransition"]>[2]) => {
  const applied = await repos.applyTransition(taskId, event, options);
  await dispatcher.dispatch(applied.followUps);
  return applied;
};

const sweep = (step: SweptStep) => sweepStep({ dispatcher, logger, graceMs: 0 }, step);

/** The step with its job "completed", after `report` ran: the job finished between the sweep's two reads. */
function racing(step: SweptStep, report: (taskId: number) => Promise<unknown>): SweptStep {
  return {
    ...step,
    async jobState() {
      return "completed";
    },
    async release(awaited, state, log) {
      await report(awaited.taskId);
      return step.release(awaited, state, log);
    },
  };
}

async function collecting(): Promise<number> {
  const task = await repos.tasks.createTelegramTask({ chatId: nextChat++, maxTurns: 5, maxRounds: 3 });
  await transition(task.id, { type: "turn.received" }, {
    alongside: (tx) => new DialogueTurnRepository(tx).add({ taskId: task.id, role: "user", text: "add a health endpoint" }).then(() => undefined),
  });
  return task.id;
}

async function approved(): Promise<number> {
  const taskId = await collecting();
  await transition(taskId, { type: "analyst.drafted", consumedTurns: 1, forced: false });
  await transition(taskId, { type: "user.approved" });
  return taskId;
}

async function inReview(): Promise<number> {
  const taskId = await approved();
  await transition(taskId, { type: "dev.started" });
  await transition(taskId, { type: "dev.finished", commit: "abc123" });
  return taskId;
}

async function failedWithPostmortem(): Promise<number> {
  const taskId = await approved();
  await transition(taskId, { type: "dev.started" });
  await transition(taskId, { type: "run.failed", reason: "the tests failed" });
  return taskId;
}

const eventTypes = async (taskId: number) => (await repos.events.list(taskId)).map((e) => e.type);
const templates = async (taskId: number) =>
  (await database.db.prisma.notification.findMany({ where: { taskId }, orderBy: { id: "asc" } })).map((n) => n.template);
const only = (step: SweptStep, taskId: number): SweptStep => ({
  ...step,
  waiting: async () => (await step.waiting()).filter((a) => a.taskId === taskId),
});

describe("a repair writes only what it saw (the job reports back between the sweep's look and its write)", () => {
  const devStep = () => runningStep({ prisma: database.db.prisma, queues, transition }, QUEUE.dev);
  const reviewStep = () => runningStep({ prisma: database.db.prisma, queues, transition }, QUEUE.review);

  it("dev round: a round that reported dev.finished is not failed; one that never reported is", async () => {
    const healthy = await approved();
    const result = await sweep(
      racing(only(devStep(), healthy), async (id) => {
        await transition(id, { type: "dev.started" });
        await transition(id, { type: "dev.finished", commit: "abc123" });
      }),
    );
    expect(result.released).toBe(0);
    expect(await repos.tasks.findById(healthy)).toMatchObject({ status: "running" });
    expect(await eventTypes(healthy)).not.toContain("run.failed");
    expect(await templates(healthy)).not.toContain("task.failed");

    const lost = await approved();
    expect(await sweep(racing(only(devStep(), lost), async () => undefined))).toMatchObject({ released: 1 });
    expect(await repos.tasks.findById(lost)).toMatchObject({ status: "failed" });
  });

  it("review: a review that reported back is not failed; one that never did is", async () => {
    const healthy = await inReview();
    const result = await sweep(
      racing(only(reviewStep(), healthy), (id) => transition(id, { type: "review.rejected", findings: [] })),
    );
    expect(result.released).toBe(0);
    expect(await repos.tasks.findById(healthy)).toMatchObject({ status: "running" });
    expect(await eventTypes(healthy)).not.toContain("run.failed");

    const lost = await inReview();
    expect(await sweep(racing(only(reviewStep(), lost), async () => undefined))).toMatchObject({ released: 1 });
    expect(await repos.tasks.findById(lost)).toMatchObject({ status: "failed" });
  });

  it("analysis: the next analysis, started meanwhile, is not released for the one the sweep judged", async () => {
    const step = () => analysisStep({ prisma: database.db.prisma, queues, transition });
    const healthy = await collecting();
    const result = await sweep(
      racing(only(step(), healthy), async (id) => {
        // The judged analysis asks a question; the person answers at once, which starts the next one.
        await transition(id, { type: "analyst.asked", questions: ["which endpoint?"], consumedTurns: 1, forced: false });
        await transition(id, { type: "turn.received" }, {
          alongside: (tx) => new DialogueTurnRepository(tx).add({ taskId: id, role: "user", text: "/health" }).then(() => undefined),
        });
      }),
    );
    expect(result.released).toBe(0);
    expect(await repos.tasks.findById(healthy)).toMatchObject({ status: "collecting", analysing: true });
    expect(await eventTypes(healthy)).not.toContain("analyst.failed");

    const lost = await collecting();
    expect(await sweep(racing(only(step(), lost), async () => undefined))).toMatchObject({ released: 1 });
    expect(await eventTypes(lost)).toContain("analyst.failed");
  });

  it("postmortem: the handler's message stored meanwhile is the only one; 'unavailable' is not added", async () => {
    const enqueue = async () => undefined;
    const step = () => postmortemStep({ prisma: database.db.prisma, repos, queues, enqueue });
    const healthy = await failedWithPostmortem();
    const result = await sweep(
      racing(only(step(), healthy), async (id) => {
        const task = (await repos.tasks.findById(id))!;
        const failedAt = (await repos.events.list(id)).find((e) => e.type === "run.failed")!.createdAt;
        const notice = { template: "task.postmortem" as const, params: { taskId: id, cause: "failed" as const, why: "w", whatToDo: "d" } };
        await sendNotice({ repos, enqueue, logger }, task, notice, failedAt);
      }),
    );
    expect(result.released).toBe(0);
    expect((await templates(healthy)).filter((t) => t.startsWith("task.postmortem"))).toEqual(["task.postmortem"]);

    const lost = await failedWithPostmortem();
    expect(await sweep(racing(only(step(), lost), async () => undefined))).toMatchObject({ released: 1 });
    expect((await templates(lost)).filter((t) => t.startsWith("task.postmortem"))).toEqual(["task.postmortem-unavailable"]);
  });

  it("postmortem: a task continued and failed again meanwhile gets no 'unavailable' for the judged failure; the new one still waits on its own", async () => {
    const enqueue = async () => undefined;
    const step = () => postmortemStep({ prisma: database.db.prisma, repos, queues, enqueue });
    const healthy = await failedWithPostmortem();
    const judged = (await only(step(), healthy).waiting())[0]!.followUp;
    const result = await sweep(
      racing(only(step(), healthy), async (id) => {
        await transition(id, { type: "user.continued" });
        await transition(id, { type: "dev.started" });
        await transition(id, { type: "run.failed", reason: "the tests failed again" });
      }),
    );
    expect(result.released).toBe(0);
    expect((await templates(healthy)).filter((t) => t.startsWith("task.postmortem"))).toEqual([]);
    // The second failure's postmortem is still to come: the task waits on its newer job.
    const [waits] = await only(step(), healthy).waiting();
    expect(waits?.followUp.id).toBeGreaterThan(judged.id);

    // With the task as the sweep saw it, the judged job's failure gets its 'unavailable'.
    const lost = await failedWithPostmortem();
    expect(await sweep(racing(only(step(), lost), async () => undefined))).toMatchObject({ released: 1 });
    expect((await templates(lost)).filter((t) => t.startsWith("task.postmortem"))).toEqual(["task.postmortem-unavailable"]);
  });
});
