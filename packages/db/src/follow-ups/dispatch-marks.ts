import type { PrismaClient } from "../../generated/client.ts";
import { sqlPoolOf } from "../sql/sql-pool.ts";

/**
 * Marks outbox rows dispatched, coalescing concurrent callers: while one UPDATE is in flight,
 * every id that arrives waits for the next, so N parallel transitions cost one or two UPDATEs,
 * not N. `mark` resolves once its ids are written (or rejects with that UPDATE's error).
 */
export function createDispatchMarks(write: (ids: number[]) => Promise<void>) {
  let pending: number[] = [];
  let waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  let inFlight: Promise<void> | undefined;

  function flush(): void {
    const ids = pending;
    const batch = waiters;
    pending = [];
    waiters = [];
    inFlight = write(ids)
      .then(
        () => batch.forEach((w) => w.resolve()),
        (error: unknown) => batch.forEach((w) => w.reject(error)),
      )
      .finally(() => {
        inFlight = undefined;
        if (pending.length > 0) flush();
      });
  }

  return {
    mark(ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        pending.push(...ids);
        waiters.push({ resolve, reject });
        if (!inFlight) flush();
      });
    },
  };
}

/**
 * The mark commits without waiting for its WAL flush (synchronous_commit off for this statement's
 * own transaction only; the pooled connection keeps its setting). A mark lost to a Postgres crash
 * costs one idempotent re-enqueue by the reconciler (same job id), the case a process dying
 * between enqueue and mark already is; waiting cost a second synchronous commit per dispatch, and
 * under load the commits queue on the WAL flush behind each other, the webhook's accept among them.
 */
const MARK_DISPATCHED = `WITH async_commit AS (SELECT set_config('synchronous_commit', 'off', true))
UPDATE follow_ups SET dispatched_at = $2::timestamp FROM async_commit
WHERE id = ANY($1::int[]) AND dispatched_at IS NULL`;

/** The UPDATE behind the marks: plain SQL on the pool when there is one, else Prisma. */
export function markDispatchedWriter(prisma: PrismaClient): (ids: number[]) => Promise<void> {
  const pool = sqlPoolOf(prisma);
  if (pool) {
    return async (ids) => {
      await pool.query({
        name: "rt-mark-dispatched-async",
        text: MARK_DISPATCHED,
        values: [ids, new Date().toISOString()],
      });
    };
  }
  return async (ids) => {
    await prisma.followUp.updateMany({
      where: { id: { in: ids }, dispatchedAt: null },
      data: { dispatchedAt: new Date() },
    });
  };
}
