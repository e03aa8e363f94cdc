import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  GITEA_STATUSES,
  isFinal,
  parseJobData,
  QUEUE_NAMES,
  reduceTask,
  TELEGRAM_STATUSES,
  type QueueName,
  type TaskEffect,
  type TaskSnapshot,
  type TaskStatus,
} from "@ratatoskr/contracts";
import {
  applyMigrations,
  createDatabase,
  createRepositories,
  giteaTargetKey,
  listAwaitingAnalysis,
  listAwaitingDevOrReview,
  MIGRATIONS_DIR,
  toSnapshot,
  type Database,
  type Repositories,
  type Task,
} from "@ratatoskr/db";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { readMigrationFiles } from "../src/migrations/migration-files.ts";
import { dropSchema, testSchemaName } from "../src/testing/index.ts";
import { UPGRADE_CASES, writeOldRows, type UpgradeCase } from "./support/pre-lifecycle-rows.ts";

/**
 * 18.1: tasks of every status of both doors, written as the release before `one_lifecycle`
 * wrote them, go through the upgrade. Afterwards each row has its new status, round and waiting
 * step, today's reducer takes the next event each would get from today's code, every pending job
 * still parses, and no task is left where nothing moves it.
 */
const ONE_LIFECYCLE = "20261203120000_one_lifecycle";
const connectionString = inject("databaseUrl");
const schema = testSchemaName();
let olderMigrations: string;
let database: Database;
let repos: Repositories;
let applied: string[];
const ids = new Map<string, number>();

beforeAll(async () => {
  // The schema as the release before one_lifecycle left it: its migrations and no others.
  olderMigrations = await mkdtemp(join(tmpdir(), "ratatoskr-before-one-lifecycle-"));
  for (const { name } of await readMigrationFiles(MIGRATIONS_DIR)) {
    if (name < ONE_LIFECYCLE) await cp(join(MIGRATIONS_DIR, name), join(olderMigrations, name), { recursive: true });
  }
  await applyMigrations({ connectionString, schema, migrationsDir: olderMigrations });
  database = createDatabase({ connectionString, schema });
  repos = createRepositories(database.prisma);
  for (const c of UPGRADE_CASES) ids.set(c.name, await writeOldRows(database.prisma, c));
  // The upgrade: the remaining committed migrations, as `pnpm migrate` applies them.
  applied = await applyMigrations({ connectionString, schema });
});

afterAll(async () => {
  await database?.close();
  await dropSchema(connectionString, schema);
  if (olderMigrations) await rm(olderMigrations, { recursive: true, force: true });
});

const row = (c: UpgradeCase): Promise<Task> => database.prisma.task.findUniqueOrThrow({ where: { id: ids.get(c.name)! } });
const events = (taskId: number) => database.prisma.taskEvent.findMany({ where: { taskId }, orderBy: { version: "asc" } });

/** `queue:kind` of a job a transition asks for; the notices (notify queue) are left out. */
function jobName(queue: string, data: unknown): string | undefined {
  const { kind, cause } = data as { kind?: string; cause?: string };
  return queue === "notify" ? undefined : `${queue}:${kind ?? cause}`;
}

const effectJobs = (effects: TaskEffect[]) =>
  effects.flatMap((e) => (e.type === "enqueue" ? [jobName(e.job.queue, e.job.data)] : [])).filter((j) => j !== undefined).sort();

const LIVE = UPGRADE_CASES.filter((c) => !isFinal(c.after.status as TaskStatus));

describe("upgrade across one_lifecycle", () => {
  it("applies one_lifecycle to the older schema", () => {
    expect(applied[0]).toBe(ONE_LIFECYCLE);
  });

  it.each(UPGRADE_CASES)("$name: the row has its new status, round and paused step", async (c) => {
    const task = await row(c);
    expect({ status: task.status, round: task.round, pausedStep: task.pausedStep ?? undefined }).toEqual({
      status: c.after.status,
      round: c.after.round,
      pausedStep: c.after.pausedStep,
    });
  });

  it("leaves only today's statuses on every row and event", async () => {
    const doors: Record<string, readonly string[]> = { telegram: TELEGRAM_STATUSES, gitea: GITEA_STATUSES };
    for (const task of await database.prisma.task.findMany()) {
      expect(doors[task.source], `task ${task.id}`).toContain(task.status);
      for (const event of await events(task.id)) {
        expect(doors[task.source]).toContain(event.fromStatus);
        expect(doors[task.source]).toContain(event.toStatus);
      }
    }
  });

  it.each(UPGRADE_CASES)("$name: today's reducer replays its stored history to the row", async (c) => {
    const task = await row(c);
    let state: TaskSnapshot = {
      ...toSnapshot(task),
      status: c.door === "telegram" ? "draft" : "received",
      version: 0,
      round: 0,
      turnCount: 0,
      pendingTurns: 0,
      analysing: false,
      pausedStep: null,
    };
    for (const stored of await events(task.id)) {
      expect(stored.payload).toMatchObject({ type: stored.type });
      const result = reduceTask(state, stored.payload as never);
      if (!result.ok) throw new Error(`${c.name}: stored ${stored.type} refused at ${state.status}: ${result.refusal.reason}`);
      expect(result.task.status, `${c.name}: after ${stored.type}`).toBe(stored.toStatus);
      state = result.task;
    }
    expect({ status: state.status, round: state.round, version: state.version }).toEqual({ status: task.status, round: task.round, version: task.version });
  });

  it.each(LIVE)("$name: today's reducer takes each event the task would get next", async (c) => {
    const snapshot = toSnapshot(await row(c));
    expect(c.next.length).toBeGreaterThan(0);
    for (const next of c.next) {
      const result = reduceTask(snapshot, next.event);
      if (!result.ok) throw new Error(`${c.name}: ${next.event.type} refused: ${result.refusal.reason}`);
      expect({ status: result.task.status, jobs: effectJobs(result.effects) }, next.event.type).toEqual({ status: next.status, jobs: [...next.jobs].sort() });
    }
  });

  it("a task waiting on a dev, review or publish step is seen by the step sweeps, so a job lost in the upgrade ends it with a reason", async () => {
    const waiting = new Map((await listAwaitingDevOrReview(database.prisma)).map((a) => [a.taskId, a.followUp.queue]));
    for (const c of UPGRADE_CASES) expect(waiting.get(ids.get(c.name)!), c.name).toBe(c.after.stage);
    const analysing = (await listAwaitingAnalysis(database.prisma)).map((a) => a.taskId);
    expect(analysing).toEqual([ids.get("telegram dialogue analysing")]);
  });

  it("every job the old release left pending still parses under today's schemas", async () => {
    const pending = await database.prisma.followUp.findMany({ where: { dispatchedAt: null } });
    expect(new Set(pending.map((f) => f.queue))).toEqual(new Set(["intake", "analyst", "dev", "review", "postmortem", "notify"]));
    for (const followUp of pending) {
      expect(QUEUE_NAMES).toContain(followUp.queue);
      expect(() => parseJobData(followUp.queue as QueueName, followUp.data), followUp.jobId).not.toThrow();
    }
  });

  it("a failed command's stored failure carries the reason the person read", async () => {
    for (const name of ["gitea implement failed", "gitea implement interrupted by a restart"]) {
      const task = await row(UPGRADE_CASES.find((c) => c.name === name)!);
      const failure = (await events(task.id)).find((e) => e.toStatus === "failed")!;
      expect(failure.payload).toEqual({ type: "run.failed", reason: task.failureReason });
    }
  });

  it("/agent implement after the upgrade follows the plan reviewed before it", async () => {
    expect(await repos.tasks.latestPlan(giteaTargetKey("acme", "shop", 26))).toBe("1. write greeting.txt");
  });

  it("the next queued command of an issue starts when the running one leaves the pipeline", async () => {
    const running = ids.get("gitea implement mid dev round 1")!;
    const { task, followUps } = await repos.applyTransition(running, { type: "run.failed", reason: "the step's job was lost" });
    expect(task.status).toBe("failed");
    const next = followUps.find((f) => jobName(f.queue, f.data) === "intake:dispatch-next");
    expect(next?.data).toMatchObject({ targetKey: giteaTargetKey("acme", "shop", 20) });
    const queued = ids.get("gitea implement queued behind it")!;
    expect((await repos.tasks.listTargetQueue(giteaTargetKey("acme", "shop", 20))).map((t) => t.id)).toEqual([queued]);
  });

  it.each(LIVE.filter((c) => c.name !== "gitea implement mid dev round 1"))("$name: its next event is written through the transition path", async (c) => {
    const [first] = c.next;
    const { task, followUps } = await repos.applyTransition(ids.get(c.name)!, first!.event);
    expect(task.status).toBe(first!.status);
    expect(followUps.map((f) => jobName(f.queue, f.data)).filter((j) => j !== undefined).sort()).toEqual([...first!.jobs].sort());
  });
});
