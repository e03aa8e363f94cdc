import { jobRequest, QUEUE } from "@ratatoskr/contracts";
import { createTestDatabase, createTestRedis, serviceTestEnv, type TestDatabase, type TestRedis } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defineService, startHost, type RunningHost, type ServiceContext } from "../src/index.ts";

/**
 * JOB_LOCK_MS is how long a running job's lock lasts in Redis: what a killed process's job waits
 * for before another process takes it up. The handler reads its own lock's time to live.
 */
const lockTtls: number[] = [];
let context: ServiceContext;
const lockReader = defineService({
  name: "dev",
  queues: [QUEUE.dev],
  defaultConcurrency: 1,
  async create(ctx) {
    context = ctx;
    return {
      handlers: {
        [QUEUE.dev]: async (_data, { job }) => void lockTtls.push(await context.redis.pttl(`${job.queueQualifiedName}:${job.id}:lock`)),
      },
    };
  },
});

let database: TestDatabase;
let redis: TestRedis;
const hosts: RunningHost[] = [];
beforeAll(async () => {
  database = await createTestDatabase();
  redis = createTestRedis();
});
afterAll(async () => {
  await Promise.all(hosts.map((host) => host.shutdown("test finished")));
  await redis?.cleanup();
  await database?.drop();
});

async function lockTtlOfAJobUnder(env: NodeJS.ProcessEnv, taskId: number): Promise<number> {
  const host = await startHost({ name: "job-locks", services: [lockReader], env: serviceTestEnv(database, redis, env), handleSignals: false });
  hosts.push(host);
  const seen = lockTtls.length;
  await host.context.queues.enqueue(jobRequest(QUEUE.dev, { v: 1, taskId, kind: "implement", round: 1 }, `${taskId}-dev-1`));
  await vi.waitFor(() => expect(lockTtls.length).toBe(seen + 1), { timeout: 10_000, interval: 20 });
  await host.shutdown("measured");
  return lockTtls.at(-1)!;
}

describe("JOB_LOCK_MS", () => {
  it("is the lock a running job holds: 15 s by default, what is set otherwise", async () => {
    const byDefault = await lockTtlOfAJobUnder({}, 1);
    expect(byDefault).toBeGreaterThan(10_000);
    expect(byDefault).toBeLessThanOrEqual(15_000);

    const set = await lockTtlOfAJobUnder({ JOB_LOCK_MS: "3000", JOB_STALLED_CHECK_MS: "500" }, 2);
    expect(set).toBeGreaterThan(0);
    expect(set).toBeLessThanOrEqual(3_000);
  });

  it("refuses a lock too short to renew", async () => {
    await expect(
      startHost({ name: "job-locks", services: [lockReader], env: serviceTestEnv(database, redis, { JOB_LOCK_MS: "10" }), handleSignals: false }),
    ).rejects.toThrow(/JOB_LOCK_MS/);
  });
});
