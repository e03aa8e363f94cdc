import { createFollowUpDispatcher, createRepositories, type Repositories } from "@ratatoskr/db";
import { createTestRedis, type TestRedis } from "@ratatoskr/runtime/testing";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.ts";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createTestQueues, type TestQueues } from "./support/bullmq-queues.ts";

let t: TestDatabase;
let redis: TestRedis;
let repos: Repositories;
let queues: TestQueues;

beforeAll(async () => {
  t = await createTestDatabase();
  redis = createTestRedis();
  repos = createRepositories(t.db.prisma);
});

afterAll(async () => {
  await t.drop();
  await redis.cleanup();
});

beforeEach(async () => {
  // Earlier cases leave outbox rows behind; each case starts with an empty outbox and queues.
  await t.db.prisma.followUp.deleteMany();
  await redis.cleanup();
  queues = createTestQueues(redis.url, redis.prefix);
});

afterEach(async () => {
  await queues.close();
});

/** A committed transition whose follow-ups were never dispatched: the process "crashed" right after commit. */
async function committedButNotDispatched() {
  const task = await repos.tasks.createTelegramTask({ chatId: 42, maxTurns: 5, maxRounds: 3 });
  const { followUps } = await repos.applyTransition(task.id, { type: "turn.received" });
  return { taskId: task.id, jobId: followUps[0]?.jobId ?? "" };
}

describe("follow-up dispatch", () => {
  it("enqueues committed follow-ups and marks them dispatched", async () => {
    const dispatcher = createFollowUpDispatcher({ prisma: t.db.prisma, enqueue: queues.enqueue });
    const task = await repos.tasks.createTelegramTask({ chatId: 43, maxTurns: 5, maxRounds: 3 });
    const { followUps } = await repos.applyTransition(task.id, { type: "turn.received" });

    expect(await dispatcher.dispatch(followUps)).toEqual({ dispatched: 1, failed: 0 });
    const job = await queues.queues.analyst.getJob(`${task.id}-analyst-1`);
    expect(job?.data).toEqual({ v: 1, taskId: task.id, kind: "turn" });
    expect(job?.name).toBe("analyse-turn");
    const row = await t.db.prisma.followUp.findUniqueOrThrow({ where: { jobId: `${task.id}-analyst-1` } });
    expect(row.dispatchedAt).toBeInstanceOf(Date);
  });

  it("leaves a follow-up whose enqueue failed to the reconciler", async () => {
    const warn = vi.fn();
    const broken = createFollowUpDispatcher({
      prisma: t.db.prisma,
      enqueue: () => Promise.reject(new Error("redis down")),
      logger: { warn, error: vi.fn() },
    });
    const task = await repos.tasks.createTelegramTask({ chatId: 44, maxTurns: 5, maxRounds: 3 });
    const { followUps } = await repos.applyTransition(task.id, { type: "turn.received" });

    expect(await broken.dispatch(followUps)).toEqual({ dispatched: 0, failed: 1 });
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ jobId: `${task.id}-analyst-1` }),
      expect.any(String),
    );
    expect(
      (await t.db.prisma.followUp.findFirstOrThrow({ where: { taskId: task.id } })).dispatchedAt,
    ).toBeNull();

    const healthy = createFollowUpDispatcher({ prisma: t.db.prisma, enqueue: queues.enqueue });
    expect(await healthy.reconcile({ olderThanMs: 0 })).toEqual({ dispatched: 1, failed: 0 });
    expect(await queues.waitingIds("analyst")).toEqual([`${task.id}-analyst-1`]);
  });
});

describe("follow-up dispatch in bulk", () => {
  async function twoTasksFollowUps() {
    const rows = [];
    for (const chatId of [45, 46]) {
      const task = await repos.tasks.createTelegramTask({ chatId, maxTurns: 5, maxRounds: 3 });
      rows.push(...(await repos.applyTransition(task.id, { type: "turn.received" })).followUps);
    }
    return rows;
  }

  it("puts several rows out in one bulk call and marks them all", async () => {
    const followUps = await twoTasksFollowUps();
    const bulkCalls: string[][] = [];
    const single = vi.fn(queues.enqueue);
    const dispatcher = createFollowUpDispatcher({
      prisma: t.db.prisma,
      enqueue: single,
      enqueueBulk: async (requests) => {
        bulkCalls.push(requests.map((r) => r.jobId));
        for (const request of requests) await queues.enqueue(request);
      },
    });
    expect(await dispatcher.dispatch(followUps)).toEqual({ dispatched: 2, failed: 0 });
    expect(bulkCalls).toEqual([followUps.map((f) => f.jobId)]);
    expect(single).not.toHaveBeenCalled();
    expect((await queues.waitingIds("analyst")).sort()).toEqual(followUps.map((f) => f.jobId).sort());
    const rows = await t.db.prisma.followUp.findMany({ where: { id: { in: followUps.map((f) => f.id) } } });
    expect(rows.every((r) => r.dispatchedAt instanceof Date)).toBe(true);
  });

  it("packs the Telegram messages of several rows into one v2 notify job; other rows go as their own", async () => {
    const [analysing] = await twoTasksFollowUps();
    const task = await repos.tasks.createTelegramTask({ chatId: 47, maxTurns: 5, maxRounds: 3 });
    const messages = await Promise.all(
      [1, 2, 3].map((i) =>
        t.db.prisma.followUp.create({
          data: {
            taskId: task.id,
            queue: "notify",
            jobId: `${task.id}-notify-${i}`,
            data: { v: 1, kind: "message", notificationId: 900 + i, chatId: 600 + (i % 2) },
          },
        }),
      ),
    );
    const bulk: Array<{ jobId: string; data: unknown }> = [];
    const dispatcher = createFollowUpDispatcher({
      prisma: t.db.prisma,
      enqueue: queues.enqueue,
      enqueueBulk: async (requests) => {
        bulk.push(...requests.map((r) => ({ jobId: r.jobId, data: r.data })));
        for (const request of requests) await queues.enqueue(request);
      },
    });

    expect(await dispatcher.dispatch([analysing!, ...messages])).toEqual({ dispatched: 4, failed: 0 });
    expect(bulk).toEqual([
      { jobId: analysing!.jobId, data: analysing!.data },
      {
        jobId: expect.stringMatching(/^messages-901-3-/),
        data: {
          v: 2,
          kind: "messages",
          messages: [901, 902, 903].map((id) => ({ notificationId: id, chatId: 600 + (id % 2) })),
        },
      },
    ]);
    const rows = await t.db.prisma.followUp.findMany({ where: { id: { in: messages.map((m) => m.id) } } });
    expect(rows.every((r) => r.dispatchedAt instanceof Date)).toBe(true);
  });

  it("falls back to one enqueue per row when the bulk call fails, so a bad row fails alone", async () => {
    const followUps = await twoTasksFollowUps();
    const [bad, good] = followUps;
    const dispatcher = createFollowUpDispatcher({
      prisma: t.db.prisma,
      enqueue: (request) =>
        request.jobId === bad?.jobId ? Promise.reject(new Error("refused")) : queues.enqueue(request),
      enqueueBulk: () => Promise.reject(new Error("refused")),
    });
    expect(await dispatcher.dispatch(followUps)).toEqual({ dispatched: 1, failed: 1 });
    expect(await queues.waitingIds("analyst")).toEqual([good?.jobId]);
    const marked = await t.db.prisma.followUp.findMany({ where: { dispatchedAt: { not: null } } });
    expect(marked.map((r) => r.id)).toEqual([good?.id]);
  });
});

describe("follow-up reconciler", () => {
  it("re-enqueues a follow-up lost between commit and enqueue exactly once, even when two passes race", async () => {
    const { taskId, jobId } = await committedButNotDispatched();
    const dispatcher = createFollowUpDispatcher({ prisma: t.db.prisma, enqueue: queues.enqueue });

    await Promise.all([dispatcher.reconcile({ olderThanMs: 0 }), dispatcher.reconcile({ olderThanMs: 0 })]);

    expect(jobId).toBe(`${taskId}-analyst-1`);
    expect(await queues.waitingIds("analyst")).toEqual([jobId]);
    expect((await queues.queues.analyst.getJob(jobId))?.data).toEqual({ v: 1, taskId, kind: "turn" });
    expect((await t.db.prisma.followUp.findUniqueOrThrow({ where: { jobId } })).dispatchedAt).toBeInstanceOf(
      Date,
    );
    expect(await dispatcher.reconcile({ olderThanMs: 0 })).toEqual({ dispatched: 0, failed: 0 });
  });

  it("leaves follow-ups younger than olderThanMs alone (their dispatch may still be in flight)", async () => {
    await committedButNotDispatched();
    const dispatcher = createFollowUpDispatcher({ prisma: t.db.prisma, enqueue: queues.enqueue });

    expect(await dispatcher.reconcile({ olderThanMs: 60_000 })).toEqual({ dispatched: 0, failed: 0 });
    expect(await queues.waitingIds("analyst")).toEqual([]);
  });
});
