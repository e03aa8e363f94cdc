import { QUEUE } from "@ratatoskr/contracts";
import { createTestDatabase, createTestRedis, serviceTestEnv, type TestDatabase, type TestRedis } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defineService, startHost, type RunningHost } from "../src/index.ts";

/**
 * A process that dies between committing a transition and enqueueing its job leaves the outbox
 * row undispatched. Whichever process of the system runs next must enqueue it within seconds on
 * its default settings (grace 5 s + a pass every 5 s; the chaos trial "ingress-killed" waited 30-45 s for it).
 */
const handled: Array<{ jobId: string | undefined; at: number }> = [];
const recorder = defineService({
  name: "dev",
  queues: [QUEUE.dev],
  defaultConcurrency: 1,
  async create() {
    return { handlers: { [QUEUE.dev]: async (_data, ctx) => void handled.push({ jobId: ctx.job.id, at: Date.now() }) } };
  },
});

let database: TestDatabase;
let redis: TestRedis;
let host: RunningHost;
beforeAll(async () => {
  database = await createTestDatabase();
  redis = createTestRedis();
  host = await startHost({ name: "lost-dispatch", services: [recorder], env: serviceTestEnv(database, redis), handleSignals: false });
});
afterAll(async () => {
  await host?.shutdown("test finished");
  await redis?.cleanup();
  await database?.drop();
});

describe("a job whose enqueue a crash lost", () => {
  it("is enqueued and run within 13 s by a host on default settings, once", async () => {
    const { prisma } = database.db;
    const task = await prisma.task.create({ data: { source: "telegram", status: "running", maxTurns: 5, maxRounds: 2 } });
    const jobId = `${task.id}-dev-1`;
    const writtenAt = Date.now();
    // What the dead process committed: the follow-up, never enqueued.
    await prisma.followUp.create({
      data: { taskId: task.id, queue: QUEUE.dev, jobId, data: { v: 1, taskId: task.id, kind: "implement", round: 1 } },
    });

    await vi.waitFor(() => expect(handled.map((h) => h.jobId)).toContain(jobId), { timeout: 20_000, interval: 50 });
    expect(handled[0]!.at - writtenAt).toBeLessThan(13_000);
    await vi.waitFor(async () => {
      const row = await prisma.followUp.findUniqueOrThrow({ where: { jobId } });
      expect(row.dispatchedAt).not.toBeNull();
    });
    expect(handled.filter((h) => h.jobId === jobId)).toHaveLength(1);
  }, 30_000);
});
