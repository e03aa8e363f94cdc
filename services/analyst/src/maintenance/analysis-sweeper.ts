import { QUEUE } from "@ratatoskr/contracts";
import type { FollowUp, FollowUpDispatcher, PrismaClient } from "@ratatoskr/db";
import { startPeriodicTask, type Logger, type QueueSet } from "@ratatoskr/runtime";
import { releaseFailedAnalysis, type TransitionFn } from "../handlers/settle-analysis.ts";
import { sweepAction } from "./sweep-action.ts";

export interface AnalysisSweeperDeps {
  prisma: PrismaClient;
  queues: Pick<QueueSet, "queues">;
  dispatcher: Pick<FollowUpDispatcher, "dispatch">;
  transition: TransitionFn;
  logger: Logger;
  /** Follow-ups younger than this are not judged (default 30 s). */
  graceMs?: number;
}

export interface SweepResult {
  requeued: number;
  released: number;
}

/**
 * Postgres is the truth, Redis can be lost (issue 7): every task that waits on an analysis
 * (`collecting` and `analysing`) is checked against its newest analyst job. A job Redis no longer
 * holds is enqueued again under the same id; a job that ended without reporting back (it stalled
 * past the limit: its worker was killed again and again) releases the analysis with a message to
 * the person, so the task never stays `analysing` silently and the next message starts a new one.
 */
export async function sweepAnalyses(deps: AnalysisSweeperDeps): Promise<SweepResult> {
  const graceMs = deps.graceMs ?? 30_000;
  const waiting = await deps.prisma.task.findMany({
    where: { status: "collecting", analysing: true },
    select: { id: true, followUps: { where: { queue: QUEUE.analyst }, orderBy: { id: "desc" }, take: 1 } },
  });
  const result: SweepResult = { requeued: 0, released: 0 };
  const lost: FollowUp[] = [];
  for (const task of waiting) {
    const followUp = task.followUps[0];
    if (!followUp) continue;
    const state = await deps.queues.queues[QUEUE.analyst].getJobState(followUp.jobId);
    const action = sweepAction(
      {
        dispatched: followUp.dispatchedAt !== null,
        ageMs: Date.now() - followUp.createdAt.getTime(),
        state,
      },
      graceMs,
    );
    const log = deps.logger.child({ taskId: task.id, jobId: followUp.jobId, state });
    if (action === "requeue") {
      log.warn("analysis job missing from Redis; enqueued again from Postgres");
      lost.push(followUp);
    } else if (action === "release") {
      log.warn("analysis job ended without reporting back; the analysis is released");
      const target = { transition: deps.transition, logger: log, taskId: task.id };
      if (await releaseFailedAnalysis(target, "unavailable")) result.released++;
    }
  }
  if (lost.length > 0) result.requeued = (await deps.dispatcher.dispatch(lost)).dispatched;
  return result;
}

/** Runs {@link sweepAnalyses} every `intervalMs`; the returned function stops it. */
export function startAnalysisSweeper(deps: AnalysisSweeperDeps & { intervalMs: number }): () => Promise<void> {
  const logger = deps.logger.child({ component: "analysis-sweeper" });
  let unreachable = false;
  return startPeriodicTask({
    name: "analysis sweep",
    intervalMs: deps.intervalMs,
    logger,
    run: async () => {
      try {
        await sweepAnalyses({ ...deps, logger });
        if (unreachable) logger.info("analysis sweep works again");
        unreachable = false;
      } catch (err) {
        // One line per outage, not one per pass.
        if (!unreachable) logger.warn({ err }, "analysis sweep failed (Redis or Postgres away); will keep trying");
        unreachable = true;
      }
    },
  });
}
