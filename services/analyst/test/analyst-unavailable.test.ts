import { readinessReportOf } from "@ratatoskr/runtime";
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

function jobContext(taskId: number, attemptsMade: number, id = `${taskId}-analyst-1`): JobContext<"analyst"> {
  const job = { id, attemptsMade, opts: { attempts: 3 } } as unknown as Job<{
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

  it("on the last attempt tells the person 'unavailable', analyses the pending turn again unasked, and waits for them after three in a row", async () => {
    const task = await taskInAnalysis(9_102);
    let jobId = `${task.id}-analyst-1`;
    for (let analysis = 1; analysis <= 3; analysis++) {
      const result = await handler()({ v: 1, taskId: task.id, kind: "turn" }, jobContext(task.id, 2, jobId));
      expect(result).toEqual({ status: "failed-analysis", problem: "unavailable" });
      const next = await database.db.prisma.followUp.findFirst({ where: { taskId: task.id, queue: "analyst" }, orderBy: { id: "desc" } });
      if (analysis < 3) expect(next?.jobId).not.toBe(jobId);
      jobId = next!.jobId;
    }
    expect(await repos.tasks.findById(task.id)).toMatchObject({
      status: "collecting",
      analysing: false,
      pendingTurns: 1,
    });
    const notices = await database.db.prisma.notification.findMany({ where: { taskId: task.id }, orderBy: { id: "asc" } });
    expect(notices.map((n) => [n.template, n.params])).toEqual([
      ["task.analyst-error", { taskId: task.id, problem: "unavailable", then: "retrying" }],
      ["task.analyst-error", { taskId: task.id, problem: "unavailable", then: "retrying" }],
      ["task.analyst-error", { taskId: task.id, problem: "unavailable", then: "waiting" }],
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
      // The reason is for an operator who logged in, never on the open probe.
      expect(body.errors).toBeUndefined();
      expect((await readinessReportOf(host.http)).errors?.opencode).toContain("unreachable");
    } finally {
      await host.shutdown("test finished");
    }
  });
});
