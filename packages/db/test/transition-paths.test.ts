import type { TaskEvent } from "@ratatoskr/contracts";
import type { ApplyTransitionOptions, Task } from "@ratatoskr/db";
import { describe, expect, it } from "vitest";
import { useTestRepositories } from "./support/test-repositories.ts";

const db = useTestRepositories();

// A writes-nothing `alongside` forces the Prisma transaction; without it the plain-SQL path runs.
const viaPrisma: ApplyTransitionOptions = { alongside: async () => undefined };

const steps: Array<[TaskEvent, ApplyTransitionOptions["patch"]?]> = [
  [{ type: "turn.received" }, { locale: "ru" }],
  [
    { type: "analyst.drafted", consumedTurns: 1, forced: false },
    { title: "Dark mode", goal: "a toggle", repos: ["acme/web", "acme/api"], acceptanceCriteria: ["a", "b"] },
  ],
  [{ type: "user.approved" }, { statusCommentId: 9_007_199_254_740_993n }],
  [
    { type: "run.failed", reason: "tests red" },
    { failureReason: "tests red", branch: "ratatoskr/1" },
  ],
  [{ type: "user.retried" }],
];

/** Everything a transition wrote for one task, with ids and clocks replaced by what stays comparable. */
async function written(taskId: number) {
  const task = await db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
  const { id: _id, createdAt: _c, updatedAt: _u, finishedAt, chatId: _chat, ...columns } = task;
  const events = await db.prisma.taskEvent.findMany({ where: { taskId }, orderBy: { id: "asc" } });
  const notices = await db.prisma.notification.findMany({ where: { taskId }, orderBy: { id: "asc" } });
  const followUps = await db.prisma.followUp.findMany({ where: { taskId }, orderBy: { id: "asc" } });
  const ids = new Map(notices.map((n, i) => [n.id, i]));
  const norm = (value: unknown): unknown => {
    if (value === taskId) return "<task>";
    if (typeof value === "string") return value.replaceAll(String(taskId), "<task>");
    if (Array.isArray(value)) return value.map(norm);
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, norm(v)]));
    return value;
  };
  return {
    task: { ...columns, finished: finishedAt !== null },
    events: events.map(({ version, type, payload, fromStatus, toStatus }) => ({
      version,
      type,
      payload,
      fromStatus,
      toStatus,
    })),
    notices: notices.map(({ channel, template, params, status }) =>
      norm({ channel, template, params, status }),
    ),
    followUps: followUps.map(({ queue, jobId, data }) => {
      const notificationId = (data as { notificationId?: number }).notificationId;
      return norm({
        queue,
        jobId,
        data: {
          ...(data as object),
          notificationId: notificationId === undefined ? undefined : ids.get(notificationId),
        },
      });
    }),
  };
}

async function run(options: ApplyTransitionOptions) {
  const created = await db.repos.tasks.createTelegramTask({
    chatId: 77,
    userId: 7,
    locale: "en",
    maxTurns: 5,
    maxRounds: 3,
  });
  const returned: Task[] = [];
  for (const [event, patch] of steps) {
    const { task } = await db.repos.applyTransition(created.id, event, {
      ...options,
      ...(patch ? { patch } : {}),
    });
    // The task handed back is the row as stored, after every step (not only the last).
    expect(task).toEqual(await db.prisma.task.findUniqueOrThrow({ where: { id: created.id } }));
    returned.push(task);
  }
  return { id: created.id, returned, stored: await written(created.id) };
}

describe("applyTransition's two paths", () => {
  it("write the same rows and return the same task, column for column", async () => {
    // Task ids far from the small numbers in job data, so normalising them out is unambiguous.
    await db.prisma.$executeRaw`SELECT setval('tasks_id_seq', 100000)`;
    const before = Date.now();
    const sql = await run({});
    const prisma = await run(viaPrisma);

    expect(sql.stored).toEqual({ ...prisma.stored });
    expect(sql.stored.followUps.length).toBeGreaterThan(2);
    const strip = (task: Task) => ({
      ...task,
      id: 0,
      createdAt: 0,
      updatedAt: 0,
      finishedAt: task.finishedAt !== null,
    });
    expect(sql.returned.map(strip)).toEqual(prisma.returned.map(strip));
    // The returned row is the stored one, with Prisma's types: BigInt ids, UTC timestamps.
    const last = sql.returned.at(-1);
    expect(last?.statusCommentId).toBe(9_007_199_254_740_993n);
    expect(last?.chatId).toBe(77n);
    expect(last).toEqual(await db.prisma.task.findUniqueOrThrow({ where: { id: sql.id } }));
    expect(Math.abs((last?.updatedAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(last?.updatedAt.getTime()).toBeGreaterThanOrEqual(before - 5);
  });

  it("return outbox rows exactly as Prisma reads them back", async () => {
    const created = await db.repos.tasks.createTelegramTask({ chatId: 78, maxTurns: 5, maxRounds: 3 });
    await db.repos.applyTransition(created.id, { type: "turn.received" });
    await db.repos.applyTransition(created.id, { type: "analyst.drafted", consumedTurns: 1, forced: false });
    const { followUps } = await db.repos.applyTransition(created.id, { type: "user.approved" });

    expect(followUps).toEqual(
      await db.prisma.followUp.findMany({
        where: { taskId: created.id, jobId: { in: followUps.map((f) => f.jobId) } },
        orderBy: { id: "asc" },
      }),
    );
  });
});
