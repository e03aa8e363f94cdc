import { IllegalTransitionError, type TaskEvent } from "@ratatoskr/contracts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDatabase, createRepositories } from "../src/index.ts";
import { sqlPoolOf } from "../src/sql/sql-pool.ts";
import { useTestRepositories } from "./support/test-repositories.ts";

const db = useTestRepositories();

const newTask = (chatId: number) =>
  db.repos.tasks.createTelegramTask({ chatId, userId: 7, locale: "en", maxTurns: 50, maxRounds: 3 });

/** Tasks in `collecting` whose last write this process remembers. */
async function collectingTasks(n: number, chatBase: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const task = await newTask(chatBase + i);
    await db.repos.applyTransition(task.id, { type: "turn.received" });
    ids.push(task.id);
  }
  return ids;
}

/** Counts the statements sent on the pool: pool.query and queries on checked-out clients. */
function countStatements(): { readonly count: number } {
  const pool = sqlPoolOf(db.prisma);
  if (!pool) throw new Error("the test database has no pg pool");
  const counter = { count: 0 };
  const query = pool.query.bind(pool);
  vi.spyOn(pool, "query").mockImplementation(((...args: Parameters<typeof pool.query>) => {
    counter.count++;
    return (query as (...a: unknown[]) => unknown)(...args);
  }) as typeof pool.query);
  const connect = pool.connect.bind(pool);
  const counted = new WeakSet<object>();
  vi.spyOn(pool, "connect").mockImplementation(((callback?: unknown) => {
    // pool.query checks out with a callback; its statement is counted above.
    if (callback) return (connect as (cb: unknown) => void)(callback);
    return countClient();
  }) as typeof pool.connect);
  const countClient = async () => {
    const client = await connect();
    if (counted.has(client)) return client;
    counted.add(client);
    const clientQuery = client.query.bind(client);
    vi.spyOn(client, "query").mockImplementation(((...args: unknown[]) => {
      counter.count++;
      return (clientQuery as (...a: unknown[]) => unknown)(...args);
    }) as typeof client.query);
    return client;
  };
  return counter;
}

const drafted: TaskEvent = { type: "analyst.drafted", consumedTurns: 1, forced: false };

afterEach(() => vi.restoreAllMocks());

describe("transitions of different tasks at once (group commit)", () => {
  it("applies 100 concurrent transitions each exactly once, in far fewer statements than transitions", async () => {
    const ids = await collectingTasks(100, 20_000);
    const statements = countStatements();

    const results = await Promise.all(ids.map((id) => db.repos.applyTransition(id, drafted)));

    expect(statements.count).toBeLessThanOrEqual(5);
    expect(results.map((r) => [r.task.id, r.task.status, r.task.version])).toEqual(
      ids.map((id) => [id, "ready", 2]),
    );
    for (const [i, id] of ids.entries()) {
      expect(results[i]!.task).toEqual(await db.repos.tasks.findById(id));
      const events = await db.repos.events.list(id);
      expect(
        events.map(({ version, type, fromStatus, toStatus, payload }) => ({
          version,
          type,
          fromStatus,
          toStatus,
          payload,
        })),
      ).toEqual([
        expect.objectContaining({ version: 1, type: "turn.received" }),
        {
          version: 2,
          type: "analyst.drafted",
          fromStatus: "collecting",
          toStatus: "ready",
          payload: drafted,
        },
      ]);
      const stored = await db.prisma.followUp.findMany({ where: { taskId: id, jobId: { endsWith: "-2" } } });
      expect(results[i]!.followUps.map((f) => f.id).sort()).toEqual(stored.map((f) => f.id).sort());
    }
    // Each transition wrote its own notice, and its outbox row points at that notice.
    for (const { task, followUps } of results) {
      const notices = await db.prisma.notification.findMany({
        where: { taskId: task.id },
        orderBy: { id: "asc" },
      });
      const notify = followUps.filter((f) => f.queue === "notify");
      expect(notify.length).toBeGreaterThan(0);
      for (const f of notify) {
        expect(notices.map((n) => n.id)).toContain((f.data as { notificationId: number }).notificationId);
      }
    }
  });

  it("refuses an illegal transition alone and applies its neighbours", async () => {
    const ids = await collectingTasks(10, 21_000);

    const results = await Promise.allSettled(
      ids.map((id, i) => db.repos.applyTransition(id, i === 4 ? { type: "user.approved" } : drafted)),
    );

    expect(results[4]).toMatchObject({ status: "rejected", reason: expect.any(IllegalTransitionError) });
    for (const [i, id] of ids.entries()) {
      if (i === 4) continue;
      expect(results[i]).toMatchObject({
        status: "fulfilled",
        value: { task: { id, status: "ready", version: 2 } },
      });
    }
    expect(await db.repos.tasks.findById(ids[4]!)).toMatchObject({ status: "collecting", version: 1 });
  });

  it("fails a transition Postgres refuses for its data alone, its batch neighbours stored", async () => {
    const ids = await collectingTasks(10, 22_000);
    const statements = countStatements();

    const results = await Promise.allSettled(
      ids.map((id, i) =>
        db.repos.applyTransition(id, drafted, { patch: { title: i === 6 ? "bad\u0000title" : `t${i}` } }),
      ),
    );

    expect(results[6]).toMatchObject({ status: "rejected", reason: { code: expect.stringMatching(/^22/) } });
    for (const [i, id] of ids.entries()) {
      if (i === 6) continue;
      expect(results[i]).toMatchObject({
        status: "fulfilled",
        value: { task: { id, title: `t${i}`, version: 2 } },
      });
    }
    expect(await db.repos.tasks.findById(ids[6]!)).toMatchObject({
      status: "collecting",
      version: 1,
      title: null,
    });
    expect(await db.repos.events.list(ids[6]!)).toHaveLength(1);
    // The poison was found in a batch, not by writing each alone from the start.
    expect(statements.count).toBeLessThan(30);
  });

  it("applies transitions of one task in the order they were asked for, amid others", async () => {
    const ids = await collectingTasks(20, 23_000);
    const target = ids[0]!;

    // `user.approved` is legal only after the draft: run out of order, it would be refused.
    const calls = [
      db.repos.applyTransition(target, drafted),
      ...ids.slice(1).map((id) => db.repos.applyTransition(id, drafted)),
      db.repos.applyTransition(target, { type: "user.approved" }),
      db.repos.applyTransition(target, { type: "user.cancelled" }),
    ];
    const results = await Promise.all(calls);

    const mine = [results[0]!, results.at(-2)!, results.at(-1)!].map((r) => [r.task.version, r.task.status]);
    expect(mine).toEqual([
      [2, "ready"],
      [3, "approved"],
      [4, "cancelled"],
    ]);
    expect((await db.repos.events.list(target)).map((e) => e.type)).toEqual([
      "turn.received",
      "analyst.drafted",
      "user.approved",
      "user.cancelled",
    ]);
  });

  it("fails every transition of a batch with the outage error when Postgres is unreachable", async () => {
    const ids = await collectingTasks(5, 24_000);
    const down = createDatabase({
      connectionString: "postgresql://postgres@127.0.0.1:1/test",
      schema: "public",
    });
    try {
      const repos = createRepositories(down.prisma);
      const results = await Promise.allSettled(ids.map((id) => repos.applyTransition(id, drafted)));

      for (const result of results) {
        expect(result).toMatchObject({ status: "rejected", reason: { code: "ECONNREFUSED" } });
      }
      // Nothing stuck behind the failed batch: the next call is answered too.
      await expect(repos.applyTransition(ids[0]!, drafted)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    } finally {
      await down.close();
    }
    for (const id of ids) expect(await db.repos.tasks.findById(id)).toMatchObject({ version: 1 });
  });
});

describe("a batch's patches", () => {
  it("write every kind of column as a transition alone does, and return the rows as stored", async () => {
    const ids = await collectingTasks(4, 25_000);
    const patches = [
      { title: "Dark mode", repos: ["acme/web", "acme/api"], acceptanceCriteria: ["a", "b"] },
      {
        statusCommentId: 9_007_199_254_740_993n,
        locale: "ru",
        finishedAt: new Date("2026-01-02T03:04:05.678Z"),
      },
      { failureReason: null, branch: "ratatoskr/1", repos: [] },
      {},
    ];

    const statements = countStatements();
    const results = await Promise.all(
      ids.map((id, i) => db.repos.applyTransition(id, drafted, { patch: patches[i]! })),
    );

    expect(statements.count).toBe(1);

    for (const [i, id] of ids.entries()) {
      const stored = await db.repos.tasks.findById(id);
      expect(results[i]!.task).toEqual(stored);
      expect(stored).toMatchObject({ ...patches[i], status: "ready", version: 2 });
    }
    expect(results[3]!.task).toMatchObject({ title: null, repos: [], statusCommentId: null });
  });
});

/** A locked Prisma transition of `taskId` that holds the row until released. */
async function holdRow(taskId: number) {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let locked: () => void = () => undefined;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const done = db.repos.applyTransition(
    taskId,
    { type: "turn.received" },
    {
      alongside: async () => {
        locked();
        await gate;
      },
    },
  );
  await holding;
  return { release, done };
}

/** `promise`'s value, or "still waiting" after 3 s (under Prisma's 5 s transaction timeout). */
const within3s = <T>(promise: Promise<T>) =>
  Promise.race([
    promise,
    new Promise<"still waiting">((resolve) => setTimeout(() => resolve("still waiting"), 3_000)),
  ]);

describe("a batch and a row locked elsewhere", () => {
  it("does not wait for a task whose row another transaction holds: the others are answered at once", async () => {
    const ids = await collectingTasks(6, 26_000);
    const [held, ...free] = ids as [number, ...number[]];
    const hold = await holdRow(held);
    try {
      const statements = countStatements();
      const heldToo = db.repos.applyTransition(held, drafted);
      const others = Promise.all(free.map((id) => db.repos.applyTransition(id, drafted)));

      const answered = await within3s(others.then((results) => results.map((r) => r.task.version)));

      expect(answered).toEqual(free.map(() => 2));
      expect(statements.count).toBeLessThanOrEqual(2);
      hold.release();
      await hold.done;
      await expect(heldToo).resolves.toMatchObject({ task: { id: held, version: 3 } });
    } finally {
      hold.release();
    }
  });

  it("does not let transitions of locked rows, asked for alone, take every batch slot", async () => {
    const [a, b, free] = (await collectingTasks(3, 27_000)) as [number, number, number];
    const holds = [await holdRow(a), await holdRow(b)];
    try {
      // Each in a tick of its own: two batches of one, as many as may be in flight.
      const waiting = [db.repos.applyTransition(a, drafted)];
      await new Promise<void>((resolve) => setImmediate(resolve));
      waiting.push(db.repos.applyTransition(b, drafted));
      await new Promise<void>((resolve) => setImmediate(resolve));

      const answered = await within3s(db.repos.applyTransition(free, drafted).then((r) => r.task.version));

      expect(answered).toBe(2);
      for (const hold of holds) hold.release();
      await Promise.all(holds.map((hold) => hold.done));
      expect((await Promise.all(waiting)).map((r) => r.task.version)).toEqual([3, 3]);
    } finally {
      for (const hold of holds) hold.release();
    }
  });
});
