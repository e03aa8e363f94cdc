import type { TaskEvent } from "@ratatoskr/contracts";
import type pg from "pg";
import type { Task } from "../../generated/client.ts";
import { createGroupCommit } from "../sql/group-commit.ts";
import { TaskRowCache } from "./task-row-cache.ts";
import { applyAlone } from "./transition-alone.ts";
import { applyBatch, type TransitionRequest } from "./transition-batch.ts";
import type { AppliedTransition, TaskPatch } from "./transition-types.ts";

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

/**
 * A task row this process just wrote outside a transition (the run's session on the task): the
 * task's next transition is planned on it and written in one statement. Remembering the row from
 * before would cost that transition a refused write and a fresh read first.
 */
export function rememberTaskRow(pool: pg.Pool, task: Task): void {
  cacheOf(pool).set(task);
}

/**
 * Transitions written by one statement at most; more wait for the next. Two half batches on two
 * backends beat one full one on a 2-core host (100 at once: ~1.2× vs ~0.8× the floor, noisy).
 */
const MAX_BATCH = 50;
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
  expectVersion?: number,
): Promise<AppliedTransition> {
  return batcherOf(pool)({ taskId, event, patch, expectVersion });
}
