import { IllegalTransitionError, type TaskEvent } from "@ratatoskr/contracts";
import type pg from "pg";
import type { Task } from "../../generated/client.ts";
import { isConflictSqlError, isPoisonSqlError } from "../sql/poison-sql.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";
import type { TaskRowCache } from "./task-row-cache.ts";
import { writeBatchQuery, type PlannedWrite } from "./transition-batch-write.ts";
import { planTransition } from "./transition-plan.ts";
import {
  assertExpectedVersion,
  movedOnSince,
  TaskNotFoundError,
  type AppliedTransition,
  type TaskPatch,
} from "./transition-types.ts";
import { toFollowUp, writeQuery, type FollowUpJson } from "./transition-write.ts";

export interface TransitionRequest {
  taskId: number;
  event: TaskEvent;
  patch: TaskPatch;
  /** Write only while the task is at this version (a conditional repair). */
  expectVersion?: number;
}

type WrittenRow = { follow_ups_json: FollowUpJson[] } & Record<string, unknown>;

export interface BatchDeps {
  pool: pg.Pool;
  cache: TaskRowCache;
  /** One transition on its own (fresh read, retries, row lock): for what the batch cannot settle. */
  applyAlone(request: TransitionRequest): Promise<AppliedTransition>;
}

/** Rows of the tasks this process does not remember, in one read; `fresh` marks which were read. */
async function taskRows(
  deps: BatchDeps,
  ids: number[],
): Promise<{ rows: Map<number, Task>; fresh: Set<number> }> {
  const rows = new Map<number, Task>();
  const missing: number[] = [];
  for (const id of ids) {
    const remembered = deps.cache.get(id);
    if (remembered) rows.set(id, remembered);
    else missing.push(id);
  }
  if (missing.length === 0) return { rows, fresh: new Set() };
  const read = await deps.pool.query({
    name: "rt-task-read-many",
    text: "SELECT * FROM tasks WHERE id = ANY($1::int[])",
    values: [missing],
    types: prismaLikeTypes,
  });
  for (const row of read.rows as Record<string, unknown>[]) {
    const task = camelRow<Task>(row);
    rows.set(task.id, task);
  }
  return { rows, fresh: new Set(missing) };
}

/**
 * A batch of transitions of different tasks: their rows (remembered, or read in one query), the
 * reducer on each, then one statement and one commit for all that it accepts. Resolves once that
 * statement is done, with each request's own outcome. Only a fresh row may refuse an event; a
 * refusal on a remembered row, a write that lost a race or met a locked row, and a batch Postgres
 * refused for one request's data (or lost in a deadlock) go through `applyAlone` one by one, so a
 * poison request fails alone and a locked one waits alone. An outage throws: it fails them all.
 */
export async function applyBatch(
  deps: BatchDeps,
  requests: readonly TransitionRequest[],
): Promise<Promise<AppliedTransition>[]> {
  // Settled at the end only: a rejected promise made before an outage throws would go unheard.
  const outcomes: (AppliedTransition | { refused: unknown })[] = [];
  const alone = new Set<number>();
  const { rows, fresh } = await taskRows(
    deps,
    requests.map((r) => r.taskId),
  );
  const now = new Date();
  const writes: { index: number; write: PlannedWrite }[] = [];
  requests.forEach(({ taskId, event, patch, expectVersion }, index) => {
    const row = rows.get(taskId);
    if (!row) return void (outcomes[index] = { refused: new TaskNotFoundError(taskId) });
    try {
      // A remembered row may be behind; only a fresh one proves the task moved on.
      if (movedOnSince(row, expectVersion) && !fresh.has(taskId)) return void alone.add(index);
      assertExpectedVersion(row, event, expectVersion);
      const plan = planTransition(row, event, now);
      writes.push({ index, write: { row, event, patch: { ...plan.patch, ...patch }, plan } });
    } catch (error) {
      if (error instanceof IllegalTransitionError && !fresh.has(taskId)) alone.add(index);
      else outcomes[index] = { refused: error };
    }
  });

  if (writes.length > 0) {
    try {
      // One alone takes the single statement: the same rows, cheaper to run than a batch of one.
      const only = writes.length === 1 ? writes[0]!.write : undefined;
      const query = only
        ? writeQuery(only.row, only.event, only.plan, only.patch, now, { skipLocked: true })
        : writeBatchQuery(
            writes.map((w) => w.write),
            now,
          );
      const written = new Map<number, AppliedTransition>();
      for (const row of (await deps.pool.query(query)).rows as WrittenRow[]) {
        const { follow_ups_json: followUps, ...task } = row;
        const applied = { task: camelRow<Task>(task), followUps: followUps.map(toFollowUp) };
        written.set(applied.task.id, applied);
      }
      for (const { index, write } of writes) {
        const applied = written.get(write.row.id);
        if (!applied) alone.add(index);
        else {
          deps.cache.set(applied.task);
          outcomes[index] = applied;
        }
      }
    } catch (error) {
      if (!isPoisonSqlError(error) && !isConflictSqlError(error)) throw error;
      for (const { index } of writes) alone.add(index);
    }
  }

  return requests.map((request, index) => {
    if (alone.has(index)) {
      // What the batch could not settle is planned afresh, not on the remembered row.
      deps.cache.delete(request.taskId);
      return deps.applyAlone(request);
    }
    const outcome = outcomes[index]!;
    return "refused" in outcome ? Promise.reject(outcome.refused) : Promise.resolve(outcome);
  });
}
