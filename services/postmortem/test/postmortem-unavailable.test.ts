import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRepositories, type Repositories } from "@ratatoskr/db";
import { createOpencodeClient, type OpencodeClient } from "@ratatoskr/opencode";
import { createLogger, type JobContext } from "@ratatoskr/runtime";
import { freePort } from "@ratatoskr/testkit";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/testkit/vitest";
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExplainFailureHandler } from "../src/index.ts";

let database: TestDatabase;
let repos: Repositories;
let client: OpencodeClient;
let workspace: string;
const enqueued: unknown[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  repos = createRepositories(database.db.prisma);
  workspace = await mkdtemp(join(tmpdir(), "ratatoskr-postmortem-down-"));
  // Nothing listens here: opencode is down.
  client = createOpencodeClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, defaultModel: "fake/scripted" });
});
afterAll(async () => {
  await client?.close();
  await database?.drop();
  await rm(workspace, { recursive: true, force: true });
});

const logger = createLogger({ service: "postmortem-test", level: "silent" });

function handler() {
  return createExplainFailureHandler({
    repos,
    opencode: client,
    enqueue: async (request) => {
      enqueued.push(request);
    },
    directory: workspace,
    traceBudgetChars: 10_000,
    idleTimeoutMs: 5_000,
    hardTimeoutMs: 10_000,
  });
}

function ctx(jobId: string, attemptsMade: number): JobContext<"postmortem"> {
  const job = { id: jobId, attemptsMade, opts: { attempts: 2 } } as unknown as Job;
  return { job, logger, signal: new AbortController().signal } as JobContext<"postmortem">;
}

async function failedTask(chatId: number) {
  const task = await database.db.prisma.task.create({
    data: { source: "telegram", chatId, maxTurns: 5, maxRounds: 2, status: "ready", title: "Down", repos: ["demo/hello"] },
  });
  await repos.applyTransition(task.id, { type: "user.approved" });
  await repos.applyTransition(task.id, { type: "dev.started" });
  return (await repos.applyTransition(task.id, { type: "run.failed", reason: "boom" })).task;
}

describe("postmortem while opencode is down", () => {
  it("retries first, then tells the person the postmortem is unavailable, and never touches the task", async () => {
    const task = await failedTask(9_101);
    const jobId = `${task.id}-postmortem-${task.version}`;
    const data = { v: 1 as const, taskId: task.id, cause: "failed" as const };

    await expect(handler()(data, ctx(jobId, 0))).rejects.toThrow(/could not start/);
    expect(await repos.notifications.findForTaskSince(task.id, ["task.postmortem", "task.postmortem-unavailable"], new Date(0))).toBeNull();

    await expect(handler()(data, ctx(jobId, 1))).resolves.toEqual({ sent: "task.postmortem-unavailable" });
    const rows = await database.db.prisma.notification.findMany({ where: { taskId: task.id, template: { startsWith: "task.postmortem" } } });
    expect(rows.map((r) => ({ template: r.template, params: r.params, chatId: r.chatId }))).toEqual([
      {
        template: "task.postmortem-unavailable",
        // The true reason: the agent server could not be reached (opencode is down), not "could not finish".
        params: { taskId: task.id, reason: expect.stringMatching(/^the postmortem agent failed: .*could not start/) },
        chatId: 9_101n,
      },
    ]);
    expect(enqueued).toContainEqual(expect.objectContaining({ queue: "notify", data: { v: 1, kind: "message", notificationId: rows[0]?.id, chatId: 9_101 } }));
    const after = await database.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect({ status: after.status, version: after.version }).toEqual({ status: "failed", version: task.version });

    // Delivered once more: nothing new.
    await expect(handler()(data, ctx(jobId, 0))).resolves.toMatchObject({ status: "skipped" });
    expect(await database.db.prisma.notification.count({ where: { taskId: task.id, template: { startsWith: "task.postmortem" } } })).toBe(1);
  });
});
