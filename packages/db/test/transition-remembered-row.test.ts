import { IllegalTransitionError } from "@ratatoskr/contracts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDatabase, createRepositories, type Database, type Repositories } from "../src/index.ts";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.ts";
import { TaskRowCache } from "../src/transitions/task-row-cache.ts";

// Two processes on one schema: each has its own pool, so each remembers only its own writes.
let database: TestDatabase;
let other: Database;
let here: Repositories;
let there: Repositories;
beforeAll(async () => {
  database = await createTestDatabase();
  other = createDatabase({ connectionString: database.connectionString, schema: database.schema });
  here = createRepositories(database.db.prisma);
  there = createRepositories(other.prisma);
});
afterAll(async () => {
  await other.close();
  await database.drop();
});

const newTask = (chatId: number) =>
  here.tasks.createTelegramTask({ chatId, userId: 7, locale: "en", maxTurns: 50, maxRounds: 3 });
const eventCount = (taskId: number) => database.db.prisma.taskEvent.count({ where: { taskId } });

describe("a transition planned on the row this process last wrote", () => {
  it("is planned afresh when another process moved the task on, even if the old row refuses the event", async () => {
    const task = await newTask(401);
    await here.applyTransition(task.id, { type: "turn.received" });
    // Elsewhere the draft arrives: the task is ready, which this process has not seen.
    await there.applyTransition(task.id, { type: "analyst.drafted", consumedTurns: 1, forced: false });
    await expect(
      there.applyTransition(task.id, { type: "user.approved" }, { alongside: async () => undefined }),
    ).resolves.toBeDefined();
    await there.applyTransition(task.id, { type: "run.failed", reason: "tests red" });

    // Legal only from what the row is now, not from `collecting` as this process last wrote it.
    const { task: retried } = await here.applyTransition(task.id, { type: "user.retried" });

    expect(retried).toMatchObject({ version: 5 });
    expect(retried).toEqual(await here.tasks.findById(task.id));
    expect(await eventCount(task.id)).toBe(5);
  });

  it("sees a status set by a plain Prisma update (no version bump) and refuses on it", async () => {
    const task = await newTask(402);
    await here.applyTransition(task.id, { type: "turn.received" });
    await database.db.prisma.task.update({ where: { id: task.id }, data: { status: "cancelled" } });

    // From `collecting` (as last written here) a draft would be taken; the task is cancelled.
    await expect(
      here.applyTransition(task.id, { type: "analyst.drafted", consumedTurns: 1, forced: false }),
    ).rejects.toBeInstanceOf(IllegalTransitionError);
    expect(await eventCount(task.id)).toBe(1);
    expect(await here.tasks.findById(task.id)).toMatchObject({ status: "cancelled", version: 1 });
  });

  it("returns columns another writer changed since, as stored", async () => {
    const task = await newTask(403);
    await here.applyTransition(task.id, { type: "turn.received" });
    await here.tasks.updateDraft(task.id, { title: "Dark mode", goal: "a toggle" });

    const { task: drafted } = await here.applyTransition(task.id, {
      type: "analyst.drafted",
      consumedTurns: 1,
      forced: false,
    });

    expect(drafted).toMatchObject({ title: "Dark mode", goal: "a toggle", status: "ready" });
    expect(drafted).toEqual(await here.tasks.findById(task.id));
  });
});

describe("a run's session stored on the task (updateRun)", () => {
  it("is remembered: the task's next transition is one statement, no refused write or read first", async () => {
    const task = await newTask(404);
    await here.applyTransition(task.id, { type: "turn.received" });
    await here.tasks.updateRun(task.id, { agentSessionId: "ses_1", agentServerUrl: "http://opencode" });
    const pool = database.db.pool;
    const queries = vi.spyOn(pool, "query");
    const connections = vi.spyOn(pool, "connect");
    try {
      const { task: drafted } = await here.applyTransition(task.id, {
        type: "analyst.drafted",
        consumedTurns: 1,
        forced: false,
      });
      // One statement on the pool, and no connection of its own for a transition alone.
      expect(queries).toHaveBeenCalledTimes(1);
      expect(connections).toHaveBeenCalledTimes(1);
      expect(drafted).toMatchObject({ status: "ready", version: 2, agentSessionId: "ses_1" });
    } finally {
      queries.mockRestore();
      connections.mockRestore();
    }
    expect(await here.tasks.findById(task.id)).toMatchObject({ status: "ready", agentSessionId: "ses_1" });
  });
});

describe("TaskRowCache", () => {
  const row = (id: number, version: number) => ({ id, version }) as Parameters<TaskRowCache["set"]>[0];

  it("keeps the newer row when writes of one task finish out of order", () => {
    const cache = new TaskRowCache();
    cache.set(row(1, 3));
    cache.set(row(1, 2));
    expect(cache.get(1)?.version).toBe(3);
  });

  it("forgets the least recently written task beyond its capacity", () => {
    const cache = new TaskRowCache(2);
    cache.set(row(1, 1));
    cache.set(row(2, 1));
    cache.set(row(1, 2));
    cache.set(row(3, 1));
    expect([cache.get(1)?.version, cache.get(2), cache.get(3)?.version]).toEqual([2, undefined, 1]);
  });
});
