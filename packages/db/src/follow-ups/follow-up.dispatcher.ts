import type { AnyJobRequest } from "@ratatoskr/contracts";
import type { FollowUp, PrismaClient } from "../../generated/client.ts";
import { createDispatchMarks, markDispatchedWriter } from "./dispatch-marks.ts";
import { packFollowUps, toJobRequest } from "./follow-up-job.ts";
import { listUndispatchedFollowUps } from "./follow-up-sql.ts";

/** Subset of pino's Logger the dispatcher uses. */
export interface DispatchLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface FollowUpDispatcherOptions {
  prisma: PrismaClient;
  /** Puts one job on its queue; must add with `jobId` so a repeated enqueue is a no-op. */
  enqueue: (request: AnyJobRequest) => Promise<void>;
  /**
   * Puts many jobs on their queues in one round trip per queue, all or nothing. When given, a
   * dispatch of several rows tries it first — with the rows' Telegram messages packed several to
   * a notify job — and falls back to one `enqueue` per row (its own job) if it fails, so one bad
   * row never holds up the rest.
   */
  enqueueBulk?: (requests: readonly AnyJobRequest[]) => Promise<void>;
  logger?: DispatchLogger;
}

export interface DispatchResult {
  dispatched: number;
  failed: number;
}

export interface ReconcileOptions {
  /** Only rows at least this old: younger ones are probably being dispatched right now. */
  olderThanMs?: number;
  /** Rows per pass. */
  limit?: number;
}

export interface FollowUpDispatcher {
  /** Enqueue committed follow-ups, then mark them dispatched. Never throws for a failed enqueue: the reconciler retries it. */
  dispatch(followUps: readonly FollowUp[]): Promise<DispatchResult>;
  /** Re-enqueue follow-ups whose dispatch was lost (a crash between commit and enqueue). */
  reconcile(options?: ReconcileOptions): Promise<DispatchResult>;
}

const DEFAULT_OLDER_THAN_MS = 30_000;
const DEFAULT_LIMIT = 100;

const silent: DispatchLogger = { warn: () => undefined, error: () => undefined };

export function createFollowUpDispatcher({
  prisma,
  enqueue,
  enqueueBulk,
  logger = silent,
}: FollowUpDispatcherOptions): FollowUpDispatcher {
  const marks = createDispatchMarks(markDispatchedWriter(prisma));

  async function dispatch(followUps: readonly FollowUp[]): Promise<DispatchResult> {
    if (enqueueBulk && followUps.length > 1) {
      const sent = await enqueueBulk(packFollowUps(followUps)).then(
        () => true,
        () => false,
      );
      if (sent) {
        await marks.mark(followUps.map((f) => f.id));
        return { dispatched: followUps.length, failed: 0 };
      }
    }
    // Enqueues go out together (one Redis pipeline's worth of round trips, not one per row).
    const outcomes = await Promise.all(
      followUps.map(async (followUp) => {
        try {
          await enqueue(toJobRequest(followUp));
          return followUp.id;
        } catch (error) {
          logger.warn(
            { err: error, jobId: followUp.jobId, queue: followUp.queue },
            "follow-up not enqueued; the reconciler will retry",
          );
          return undefined;
        }
      }),
    );
    const done = outcomes.filter((id): id is number => id !== undefined);
    await marks.mark(done);
    return { dispatched: done.length, failed: followUps.length - done.length };
  }

  async function reconcile({
    olderThanMs = DEFAULT_OLDER_THAN_MS,
    limit = DEFAULT_LIMIT,
  }: ReconcileOptions = {}) {
    return dispatch(await listUndispatchedFollowUps(prisma, new Date(Date.now() - olderThanMs), limit));
  }

  return { dispatch, reconcile };
}
