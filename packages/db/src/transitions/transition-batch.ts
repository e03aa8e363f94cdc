import { IllegalTransitionError, type TaskEvent } from "@ratatoskr/contracts";
import type pg from "pg";
import type { Task } from "../../generated/client.ts";
import { isConflictSqlError, isPoisonSqlError } from "../sql/poison-sql.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";
import type { TaskRowCache } from "./task-row-cache.ts";
import { writeBatchQuery, type PlannedWrite } from "./transition-batch-write.ts";
import { planTransition } from "./transition-plan.ts";
import { TaskNotFoundError, type AppliedTransition, type TaskPatch } from "./transition-types.ts";
import { toFollowUp, type FollowUpJson } from "./transition-write.ts";

export interface TransitionRequest {
  taskId: number;
  event: TaskEvent;
  patch: TaskPatch;
}

type Outcome = PromiseSettledResult<AppliedTransition>;

export interface BatchDeps {
  pool: pg.Pool;
  cache: TaskRowCache;
  /** One transition on its own (fresh read, retries, row lock): for what the batch cannot settle. */
  applyAlone(request: TransitionRequest): Promise<AppliedTransition>;
}

const settle = (promise: Promise<AppliedTransition>): Promise<Outcome> =>
  promise.then(
    (value) => ({ status: "fulfilled", value }),
    (reason: unknown) => ({ status: "rejected", reason }),
  );

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
 * reducer on each, then one statement and one commit for all that it accepts. Each request gets
 * its own outcome. Only a fresh row may refuse an event; a refusal on a remembered row, a write
 * that lost a race, and a batch Postgres refused for one request's data or lost in a deadlock go
 * through `applyAlone` one by one, so a poison request fails alone. An outage throws: it fails all.
 */
export async function applyBatch(
  deps: BatchDeps,
  requests: readonly TransitionRequest[],
): Promise<Outcome[]> {
  if (requests.length === 1) return [await settle(deps.applyAlone(requests[0]!))];
  const outcomes: (Outcome | undefined)[] = requests.map(() => undefined);
  const alone = new Set<number>();
  const { rows, fresh } = await taskRows(
    deps,
    requests.map((r) => r.taskId),
  );
  const now = new Date();
  const writes: { index: number; write: PlannedWrite }[] = [];
  requests.forEach(({ taskId, event, patch }, index) => {
    const row = rows.get(taskId);
    if (!row) return void (outcomes[index] = { status: "rejected", reason: new TaskNotFoundError(taskId) });
    try {
      writes.push({ index, write: { row, event, patch, plan: planTransition(row, event, now) } });
    } catch (error) {
      if (error instanceof IllegalTransitionError && !fresh.has(taskId)) alone.add(index);
      else outcomes[index] = { status: "rejected", reason: error };
    }
  });

  if (writes.length > 0) {
    try {
      const result = await deps.pool.query(
        writeBatchQuery(
          writes.map((w) => w.write),
          now,
        ),
      );
      const written = new Map<number, AppliedTransition>();
      for (const row of result.rows as ({ follow_ups_json: FollowUpJson[] } & Record<string, unknown>)[]) {
        const { follow_ups_json: followUps, ...task } = row;
        const applied = { task: camelRow<Task>(task), followUps: followUps.map(toFollowUp) };
        written.set(applied.task.id, applied);
      }
      for (const { index, write } of writes) {
        const applied = written.get(write.row.id);
        if (!applied) alone.add(index);
        else {
          deps.cache.set(applied.task);
          outcomes[index] = { status: "fulfilled", value: applied };
        }
      }
    } catch (error) {
      if (!isPoisonSqlError(error) && !isConflictSqlError(error)) throw error;
      for (const { index } of writes) alone.add(index);
    }
  }

  // What the batch could not settle is planned afresh, not on the remembered row.
  for (const index of alone) deps.cache.delete(requests[index]!.taskId);
  await Promise.all(
    [...alone].map(async (index) => (outcomes[index] = await settle(deps.applyAlone(requests[index]!)))),
  );
  return outcomes as Outcome[];
}
