import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRepositories, DialogueTurnRepository, type Repositories } from "@ratatoskr/db";
import { createOpencodeClient, type OpencodeClient } from "@ratatoskr/opencode";
import { createLogger, type JobContext } from "@ratatoskr/runtime";
import { startHost } from "@ratatoskr/service-host";
import { freePort } from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
  serviceTestEnv,
} from "@ratatoskr/testkit/vitest";
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analystService } from "../src/index.ts";
import { createAnalyseTurnHandler } from "../src/handlers/analyse-turn.handler.ts";

let database: TestDatabase;
let redis: TestRedis;
let repos: Repositories;
let client: OpencodeClient;
let workspace: string;
let deadUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createTestRedis();
  repos = createRepositories(database.db.prisma);
  workspace = await mkdtemp(join(tmpdir(), "ratatoskr-analyst-down-"));
  // Nothing listens here: opencode is down.
  deadUrl = `http://127.0.0.1:${await freePort()}`;
  client = createOpencodeClient({ baseUrl: deadUrl, defaultModel: "fake/scripted" });
});
afterAll(async () => {
  await client?.close();
  await redis?.cleanup();
  await database?.drop();
  await rm(workspace, { recursive: true, force: true });
});

const logger = createLogger({ service: "analyst-test", level: "silent" });

function handler() {
  return createAnalyseTurnHandler({
    repos,
    transition: (taskId, event, options) => repos.applyTransition(taskId, event, options),
    opencode: client,
    repositories: undefined,
    directory: workspace,
    idleTimeoutMs: 5_000,
    hardTimeoutMs: 10_000,
    maxQuestions: 3,
  });
}

/** A task with one pending turn and its analysis requested, as after `turn.received`. */
async function taskInAnalysis(chatId: number) {
  const task = await repos.tasks.createTelegramTask({ chatId, maxTurns: 5, maxRounds: 3 });
  await repos.applyTransition(
    task.id,
    { type: "turn.received" },
    {
      alongside: (tx) =>
        new DialogueTurnRepository(tx)
          .add({ taskId: task.id, role: "user", text: "hello" })
          .then(() => undefined),
    },
  );
  return task;
}

function jobContext(taskId: number, attemptsMade: number): JobContext<"analyst"> {
  const job = { id: `${taskId}-analyst-1`, attemptsMade, opts: { attempts: 3 } } as unknown as Job<{
    v: 1;
    taskId: number;
    kind: "turn";
  }>;
  return { job, logger, signal: new AbortController().signal };
}

describe("analyst when opencode is unreachable", () => {
  it("throws so the job is retried, and leaves the task analysing with its turn pending", async () => {
    const task = await taskInAnalysis(9_101);
    await expect(handler()({ v: 1, taskId: task.id, kind: "turn" }, jobContext(task.id, 0))).rejects.toThrow(
      /will retry.*unreachable/,
    );

    expect(await repos.tasks.findById(task.id)).toMatchObject({
      status: "collecting",
      analysing: true,
      pendingTurns: 1,
    });
    expect(await repos.traces.list(task.id)).toMatchObject([
      { agent: "analyst", outcome: "failed", serverUrl: deadUrl },
    ]);
  });

  it("on the last attempt tells the person 'unavailable' and releases the task", async () => {
    const task = await taskInAnalysis(9_102);
    const result = await handler()({ v: 1, taskId: task.id, kind: "turn" }, jobContext(task.id, 2));

    expect(result).toEqual({ status: "failed-analysis", problem: "unavailable" });
    expect(await repos.tasks.findById(task.id)).toMatchObject({
      status: "collecting",
      analysing: false,
      pendingTurns: 1,
    });
    const notices = await database.db.prisma.notification.findMany({ where: { taskId: task.id } });
    expect(notices.map((n) => [n.template, n.params])).toEqual([
      ["task.analyst-error", { taskId: task.id, problem: "unavailable" }],
    ]);
  });

  it("fails Gitea plan commands permanently with a clear message", async () => {
    await expect(handler()({ v: 1, taskId: 1, kind: "plan" }, jobContext(1, 0))).rejects.toThrow(
      /"plan" commands are not implemented yet/,
    );
  });

  it("skips a job whose task is no longer being analysed", async () => {
    const task = await taskInAnalysis(9_103);
    await repos.applyTransition(task.id, { type: "user.cancelled" });
    const result = await handler()({ v: 1, taskId: task.id, kind: "turn" }, jobContext(task.id, 0));
    expect(result).toMatchObject({ status: "skipped" });
    expect(await repos.traces.list(task.id)).toEqual([]);
  });

  it("still starts, with readiness false because of opencode", async () => {
    const host = await startHost({
      name: "analyst",
      services: [analystService],
      env: serviceTestEnv(database, redis, { OPENCODE_URL: deadUrl, WORKSPACE_DIR: workspace }),
      handleSignals: false,
    });
    try {
      const res = await fetch(`${host.url}/health/ready`);
      const body = (await res.json()) as { checks: Record<string, string>; errors?: Record<string, string> };
      expect(res.status).toBe(503);
      expect(body.checks).toMatchObject({ opencode: "failed", redis: "ok", postgres: "ok" });
      expect(body.errors?.opencode).toContain("unreachable");
    } finally {
      await host.shutdown("test finished");
    }
  });
});
