import { IllegalTransitionError, type TaskEvent } from "@ratatoskr/contracts";
import type pg from "pg";
import type { Task } from "../../generated/client.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";
import { createGroupCommit } from "../sql/group-commit.ts";
import { TaskRowCache } from "./task-row-cache.ts";
import { applyBatch, type TransitionRequest } from "./transition-batch.ts";
import { planTransition } from "./transition-plan.ts";
import { TaskNotFoundError, type AppliedTransition, type TaskPatch } from "./transition-types.ts";
import { toFollowUp, writeQuery, type FollowUpJson } from "./transition-write.ts";

const READ = "SELECT * FROM tasks WHERE id = $1";
const LOCK = "SELECT * FROM tasks WHERE id = $1 FOR UPDATE";

/**
 * Optimistic tries on a fresh read before taking the row lock. A task rarely sees two events at
 * once; when it does, the lock queues them instead of letting them retry against each other.
 */
const OPTIMISTIC_TRIES = 2;

type Queryable = Pick<pg.PoolClient, "query">;

/** One cache per pool (per database a process uses), made on first use. */
const caches = new WeakMap<pg.Pool, TaskRowCache>();

function cacheOf(pool: pg.Pool): TaskRowCache {
  let cache = caches.get(pool);
  if (!cache) caches.set(pool, (cache = new TaskRowCache()));
  return cache;
}

/** A transition written elsewhere in this process (the Prisma path): its remembered row is stale. */
export function forgetTaskRow(pool: pg.Pool, taskId: number): void {
  caches.get(pool)?.delete(taskId);
}

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
): Promise<AppliedTransition | undefined> {
  const now = new Date();
  // Throws IllegalTransitionError before anything is written.
  const plan = planTransition(row, event, now);
  const written = await db.query(writeQuery(row, event, plan, patch, now));
  const first = written.rows[0] as
    ({ follow_ups_json: FollowUpJson[] } & Record<string, unknown>) | undefined;
  if (!first) return undefined;
  const { follow_ups_json: followUps, ...task } = first;
  return { task: camelRow<Task>(task), followUps: followUps.map(toFollowUp) };
}

/**
 * The write planned on the row this process last wrote, without reading it: undefined when there
 * is none, when the row has moved on since, or when the remembered row refuses the event (only a
 * fresh row may refuse).
 */
async function writeRemembered(
  db: Queryable,
  cache: TaskRowCache,
  taskId: number,
  event: TaskEvent,
  patch: TaskPatch,
): Promise<AppliedTransition | undefined> {
  const remembered = cache.get(taskId);
  if (!remembered) return undefined;
  cache.delete(taskId);
  try {
    return await write(db, remembered, event, patch);
  } catch (error) {
    if (error instanceof IllegalTransitionError) return undefined;
    throw error;
  }
}

/** Transitions written by one statement at most; more wait for the next. */
const MAX_BATCH = 100;
/** Batches in flight at once; while they commit, the next one gathers. */
const MAX_IN_FLIGHT = 2;

/** One group commit per pool, made on first use. */
const batchers = new WeakMap<pg.Pool, (request: TransitionRequest) => Promise<AppliedTransition>>();

function batcherOf(pool: pg.Pool) {
  let batcher = batchers.get(pool);
  if (!batcher) {
    const cache = cacheOf(pool);
    const deps = { pool, cache, applyAlone: (r: TransitionRequest) => applyAlone(pool, cache, r) };
    batcher = createGroupCommit<TransitionRequest, AppliedTransition>({
      write: (requests) => applyBatch(deps, requests),
      // Transitions of one task are planned one on the other's result, in the order asked.
      keyOf: (request) => request.taskId,
      maxBatch: MAX_BATCH,
      maxInFlight: MAX_IN_FLIGHT,
    });
    batchers.set(pool, batcher);
  }
  return batcher;
}

/**
 * applyTransition on the pg pool. Transitions of different tasks asked for while others are being
 * written are written together (group commit, see applyBatch): one statement and one commit for
 * the batch. Transitions of one task run one after another in the order asked for.
 */
export function applyTransitionSql(
  pool: pg.Pool,
  taskId: number,
  event: TaskEvent,
  patch: TaskPatch = {},
): Promise<AppliedTransition> {
  return batcherOf(pool)({ taskId, event, patch });
}

/**
 * One transition alone: run the reducer in memory on the task row, then one statement
 * writes the task (only if its version and `updated_at` are still the ones planned on), the event,
 * the notifications and the outbox rows, atomically by itself, and returns the row as written.
 * The row comes from this process's last write of the task when it has one (one round trip),
 * else from a read (two). A concurrent transition (another process) bumps the version, so a lost
 * race writes nothing and is tried again on a fresh read; after OPTIMISTIC_TRIES it runs under
 * `SELECT … FOR UPDATE` in a transaction, where it cannot lose.
 * Same rows and same refusals as the Prisma version (which also locks, so the two interleave).
 */
async function applyAlone(
  pool: pg.Pool,
  cache: TaskRowCache,
  { taskId, event, patch }: TransitionRequest,
): Promise<AppliedTransition> {
  const applied = await applyOnConnection(pool, cache, taskId, event, patch);
  cache.set(applied.task);
  return applied;
}

async function applyOnConnection(
  pool: pg.Pool,
  cache: TaskRowCache,
  taskId: number,
  event: TaskEvent,
  patch: TaskPatch,
): Promise<AppliedTransition> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const fast = await writeRemembered(client, cache, taskId, event, patch);
    if (fast) return fast;
    for (let i = 0; i < OPTIMISTIC_TRIES; i++) {
      const applied = await write(client, await readTask(client, taskId, false), event, patch);
      if (applied) return applied;
    }
    await client.query("BEGIN");
    try {
      const applied = await write(client, await readTask(client, taskId, true), event, patch);
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
