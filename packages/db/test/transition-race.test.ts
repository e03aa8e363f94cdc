import type { TaskEvent } from "@ratatoskr/contracts";
import { describe, expect, it } from "vitest";
import { sqlPoolOf } from "../src/sql/sql-pool.ts";
import { planTransition } from "../src/transitions/transition-plan.ts";
import { writeQuery } from "../src/transitions/transition-write.ts";
import { useTestRepositories } from "./support/test-repositories.ts";

const db = useTestRepositories();

const newTask = (chatId: number) =>
  db.repos.tasks.createTelegramTask({ chatId, userId: 7, locale: "en", maxTurns: 50, maxRounds: 3 });

async function rowsOf(taskId: number) {
  return {
    events: await db.prisma.taskEvent.count({ where: { taskId } }),
    notices: await db.prisma.notification.count({ where: { taskId } }),
    followUps: await db.prisma.followUp.count({ where: { taskId } }),
  };
}

describe("transitions racing on one task", () => {
  it("a write planned on a row another transition has moved on writes nothing at all", async () => {
    const created = await newTask(301);
    const stale = await db.prisma.task.findUniqueOrThrow({ where: { id: created.id } });
    await db.repos.applyTransition(created.id, { type: "turn.received" });
    const before = await rowsOf(created.id);

    // The stale plan would start an analysis and store a notice: nothing of it may land.
    const event: TaskEvent = { type: "turn.received" };
    const now = new Date();
    const pool = sqlPoolOf(db.prisma);
    if (!pool) throw new Error("the test database has no pg pool");
    const result = await pool.query(writeQuery(stale, event, planTransition(stale, event, now), {}, now));

    expect(result.rows).toEqual([]);
    expect(await rowsOf(created.id)).toEqual(before);
    expect(await db.repos.tasks.findById(created.id)).toMatchObject({ version: 1, pendingTurns: 1 });
  });

  it("applies 20 concurrent transitions of one task each exactly once, in version order", async () => {
    const created = await newTask(302);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => db.repos.applyTransition(created.id, { type: "turn.received" })),
    );

    expect(results.map((r) => r.task.version).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(await db.repos.tasks.findById(created.id)).toMatchObject({
      version: 20,
      pendingTurns: 20,
      analysing: true,
    });
    expect((await db.repos.events.list(created.id)).map((e) => e.version)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    // Only the first turn starts an analysis, whichever call won the race.
    expect(results.flatMap((r) => r.followUps.map((f) => f.queue))).toEqual(["analyst"]);
  });

  it("interleaves with a locked Prisma transition without losing either", async () => {
    const created = await newTask(303);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let locked: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    const slow = db.repos.applyTransition(
      created.id,
      { type: "turn.received" },
      {
        alongside: async () => {
          locked();
          await gate;
        },
      },
    );
    await holding;
    // Reads the unlocked row, then waits on the lock with its write; loses and tries again.
    const fast = db.repos.applyTransition(created.id, { type: "turn.received" });
    release();
    const [a, b] = await Promise.all([slow, fast]);

    expect([a.task.version, b.task.version]).toEqual([1, 2]);
    expect(await db.repos.tasks.findById(created.id)).toMatchObject({ version: 2, pendingTurns: 2 });
  });
});
