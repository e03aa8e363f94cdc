import type { TaskEvent } from "@ratatoskr/contracts";
import type pg from "pg";
import type { Task } from "../../generated/client.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";
import type { TaskRowCache } from "./task-row-cache.ts";
import type { TransitionRequest } from "./transition-batch.ts";
import { planTransition } from "./transition-plan.ts";
import { assertExpectedVersion, TaskNotFoundError, type AppliedTransition, type TaskPatch } from "./transition-types.ts";
import { toFollowUp, writeQuery, type FollowUpJson } from "./transition-write.ts";

const READ = "SELECT * FROM tasks WHERE id = $1";
const LOCK = "SELECT * FROM tasks WHERE id = $1 FOR UPDATE";

/**
 * Optimistic tries on a fresh read before taking the row lock. A task rarely sees two events at
 * once; when it does, the lock queues them instead of letting them retry against each other.
 */
const OPTIMISTIC_TRIES = 2;

type Queryable = Pick<pg.PoolClient, "query">;

async function readTask(db: Queryable, taskId: number, lock: boolean): Promise<Task> {
  const result = await db.query({
    name: lock ? "rt-task-lock" : "rt-task-read",
    text: lock ? LOCK : READ,
    values: [taskId],
    types: prismaLikeTypes,
  });
  const row = result.rows[0] as Record<string, unknown> | undefined;
  if (!row) throw new TaskNotFoundError(taskId);
  return camelRow<Task>(row);
}

/** Plans on `row` and writes; undefined when the row moved on since it was read (nothing written). */
async function write(
  db: Queryable,
  row: Task,
  event: TaskEvent,
  patch: TaskPatch,
  expectVersion: number | undefined,
): Promise<AppliedTransition | undefined> {
  assertExpectedVersion(row, event, expectVersion);
  const now = new Date();
  // Throws IllegalTransitionError before anything is written.
  const plan = planTransition(row, event, now);
  const written = await db.query(writeQuery(row, event, plan, { ...plan.patch, ...patch }, now));
  const first = written.rows[0] as
    ({ follow_ups_json: FollowUpJson[] } & Record<string, unknown>) | undefined;
  if (!first) return undefined;
  const { follow_ups_json: followUps, ...task } = first;
  return { task: camelRow<Task>(task), followUps: followUps.map(toFollowUp) };
}

/**
 * One transition alone, for what a batch could not settle: read the task row, run the reducer in
 * memory, then one statement writes the task (only if its version and `updated_at` are still the
 * ones read), the event, the notifications and the outbox rows, atomically by itself, and returns
 * the row as written. A concurrent transition (another process) bumps the version, so a lost race
 * writes nothing and is tried again on a fresh read; after OPTIMISTIC_TRIES it runs under
 * `SELECT … FOR UPDATE` in a transaction, where it cannot lose.
 * Same rows and same refusals as the Prisma version (which also locks, so the two interleave).
 */
export async function applyAlone(
  pool: pg.Pool,
  cache: TaskRowCache,
  { taskId, event, patch, expectVersion }: TransitionRequest,
): Promise<AppliedTransition> {
  const applied = await applyOnConnection(pool, taskId, event, patch, expectVersion);
  cache.set(applied.task);
  return applied;
}

async function applyOnConnection(
  pool: pg.Pool,
  taskId: number,
  event: TaskEvent,
  patch: TaskPatch,
  expectVersion: number | undefined,
): Promise<AppliedTransition> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    for (let i = 0; i < OPTIMISTIC_TRIES; i++) {
      const applied = await write(client, await readTask(client, taskId, false), event, patch, expectVersion);
      if (applied) return applied;
    }
    await client.query("BEGIN");
    try {
      const applied = await write(client, await readTask(client, taskId, true), event, patch, expectVersion);
      // The row is locked: its version cannot have moved.
      if (!applied) throw new Error(`task ${taskId} changed under its row lock`);
      await client.query("COMMIT");
      return applied;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    }
  } finally {
    // A connection whose rollback failed is in an unknown state: the pool discards it.
    client.release(broken);
  }
}
