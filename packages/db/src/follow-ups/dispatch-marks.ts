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

/** The UPDATE behind the marks: plain SQL on the pool when there is one, else Prisma. */
export function markDispatchedWriter(prisma: PrismaClient): (ids: number[]) => Promise<void> {
  const pool = sqlPoolOf(prisma);
  if (pool) {
    return async (ids) => {
      await pool.query({
        name: "rt-mark-dispatched",
        text: "UPDATE follow_ups SET dispatched_at = $2::timestamp WHERE id = ANY($1::int[]) AND dispatched_at IS NULL",
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
