import { QUEUE } from "@ratatoskr/contracts";
import {
  createRepositories,
  listAwaitingAnalysis,
  listAwaitingDevOrReview,
  listAwaitingPostmortem,
  type PrismaClient,
} from "@ratatoskr/db";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.ts";
import { listUndispatchedFollowUps } from "../src/follow-ups/follow-up-sql.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The idle sweeps' reads moved from Prisma to plain SQL (so an idle process never loads Prisma's
 * query compiler); each is checked here against the Prisma query it replaced, on the same rows.
 */
let t: TestDatabase;
let prisma: PrismaClient;
const HOUR = 3_600_000;
const POSTMORTEM_TEMPLATES = ["task.postmortem", "task.postmortem-unavailable"];

beforeAll(async () => {
  t = await createTestDatabase();
  prisma = t.db.prisma;
  await seed();
});

afterAll(async () => {
  await t?.drop();
});

let jobs = 0;
async function task(
  data: { status: string; source?: string; analysing?: boolean; chatId?: bigint; budgetUsd?: number; repos?: string[] },
  followUps: Array<[string, number, boolean?]>) {
  const { id } = await prisma.task.create({ data: { source: "telegram", maxTurns: 5, maxRounds: 3, ...data } });
  // [queue, age in ms, dispatched]
  for (const [queue, ageMs, dispatched] of followUps) {
    await prisma.followUp.create({
      data: {
        taskId: id,
        queue,
        jobId: `job-${++jobs}`,
        data: { taskId: id, n: jobs },
        createdAt: new Date(Date.now() - ageMs),
        ...(dispatched ? { dispatchedAt: new Date() } : {}),
      },
    });
  }
  return id;
}

async function seed() {
  await task({ status: "collecting", analysing: true }, [[QUEUE.analyst, 2 * HOUR, true], [QUEUE.analyst, 60_000]]);
  await task({ status: "collecting", analysing: true }, []);
  await task({ status: "collecting", analysing: false }, [[QUEUE.analyst, 60_000]]);
  await task({ status: "collecting", analysing: true }, [[QUEUE.analyst, 10], [QUEUE.notify, 5]]);
  await task({ status: "running", chatId: 9_007_199_254_740_993n, budgetUsd: 1.25, repos: ["acme/app", "acme/lib"] }, [
    [QUEUE.dev, HOUR, true],
    [QUEUE.review, 30_000],
  ]);
  await task({ status: "approved" }, [[QUEUE.dev, 20_000]]);
  await task({ status: "running", source: "gitea" }, [[QUEUE.dev, 20_000]]);
  await task({ status: "success" }, [[QUEUE.review, 20_000]]);
  await task({ status: "running" }, [[QUEUE.review, 40_000], [QUEUE.notify, 30_000], [QUEUE.dev, 1_000]]);
  await task({ status: "failed" }, [[QUEUE.postmortem, 3 * HOUR, true], [QUEUE.postmortem, HOUR]]);
  await task({ status: "timeout" }, [[QUEUE.postmortem, 48 * HOUR]]);
  await task({ status: "failed" }, [[QUEUE.postmortem, 48 * HOUR], [QUEUE.postmortem, 10 * HOUR]]);
  const answered = await task({ status: "failed" }, [[QUEUE.postmortem, HOUR]]);
  const answeredBefore = await task({ status: "timeout" }, [[QUEUE.postmortem, HOUR]]);
  const otherTemplate = await task({ status: "failed" }, [[QUEUE.postmortem, HOUR]]);
  const message = (taskId: number, template: string, ageMs: number) =>
    prisma.notification.create({ data: { taskId, channel: "telegram", template, params: {}, createdAt: new Date(Date.now() - ageMs) } });
  await message(answered, "task.postmortem", HOUR - 1_000);
  await message(answeredBefore, "task.postmortem-unavailable", HOUR + 1_000);
  await message(otherTemplate, "task.failed", 1_000);
}

/** The Prisma query each sweep ran before, newest follow-up on `queues` per task. */
async function viaPrisma(where: object, queues: string[]) {
  const tasks = await prisma.task.findMany({
    where,
    orderBy: { id: "asc" },
    select: { id: true, version: true, source: true, followUps: { where: { queue: { in: queues } }, orderBy: { id: "desc" }, take: 1 } },
  });
  return tasks.flatMap((task) =>
    task.followUps[0] ? [{ taskId: task.id, taskVersion: task.version, source: task.source, followUp: task.followUps[0] }] : [],
  );
}

describe("the idle sweeps' plain-SQL reads select what their Prisma queries did", () => {
  it("undispatched follow-ups older than a bound, oldest first, up to a limit", async () => {
    for (const [ageMs, limit] of [[0, 100], [30_000, 100], [30_000, 2], [HOUR, 100]] as const) {
      const createdBy = new Date(Date.now() - ageMs);
      const expected = await prisma.followUp.findMany({
        where: { dispatchedAt: null, createdAt: { lte: createdBy } },
        orderBy: { id: "asc" },
        take: limit,
      });
      expect(expected.length).toBeGreaterThan(0);
      expect(await listUndispatchedFollowUps(prisma, createdBy, limit)).toEqual(expected);
    }
  });

  it("analyses: collecting tasks with an analysis running, each with its newest analyst job", async () => {
    const expected = await viaPrisma({ status: "collecting", analysing: true }, [QUEUE.analyst]);
    expect(expected).toHaveLength(2);
    expect(await listAwaitingAnalysis(prisma)).toEqual(expected);
  });

  it("dev rounds and reviews: approved or running tasks of every door, each with its newest pipeline-step job", async () => {
    const expected = await viaPrisma({ status: { in: ["approved", "running"] } }, [QUEUE.dev, QUEUE.review, QUEUE.analyst, QUEUE.intake]);
    expect(expected).toHaveLength(4);
    expect(expected.map((awaited) => awaited.source)).toContain("gitea");
    expect(await listAwaitingDevOrReview(prisma)).toEqual(expected);
  });

  it("postmortems: recent failures with no postmortem message at or after their newest postmortem job", async () => {
    const since = new Date(Date.now() - 24 * HOUR);
    const asked = await viaPrisma(
      { status: { in: ["failed", "timeout"] }, followUps: { some: { queue: QUEUE.postmortem, createdAt: { gte: since } } } },
      [QUEUE.postmortem],
    );
    const expected = [];
    for (const awaited of asked) {
      const sent = await prisma.notification.findFirst({
        where: { taskId: awaited.taskId, template: { in: POSTMORTEM_TEMPLATES }, createdAt: { gte: awaited.followUp.createdAt } },
      });
      if (!sent) expected.push(awaited);
    }
    expect(expected).toHaveLength(4);
    expect(await listAwaitingPostmortem(prisma, since, POSTMORTEM_TEMPLATES)).toEqual(expected);
  });

  it("tasks by source and status (the Gitea recovery and status refresh), in id order", async () => {
    const tasks = createRepositories(prisma).tasks;
    for (const [source, statuses] of [["gitea", ["running"]], ["telegram", ["running", "approved", "failed"]]] as const) {
      const expected = await prisma.task.findMany({ where: { source, status: { in: [...statuses] } }, orderBy: { id: "asc" } });
      expect(expected.length).toBeGreaterThan(0);
      expect(await tasks.listByStatus(source, [...statuses])).toEqual(expected);
    }
  });
});
