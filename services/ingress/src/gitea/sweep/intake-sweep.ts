import { QUEUE } from "@ratatoskr/contracts";
import { listAwaitingAuthorization, listAwaitingDevOrReview, type FollowUpDispatcher, type PrismaClient } from "@ratatoskr/db";
import { jobEndReason, readJobEnd, reportUnlessMovedOn, startStepSweeper, type SweptStep, type TransitionFn } from "@ratatoskr/pipeline";
import { startPeriodicTask, type Logger, type QueueSet } from "@ratatoskr/runtime";
import type { IntakeDeps } from "../intake/intake-deps.ts";
import { lineStillSince, runningCommands, startableHead, waitingLines } from "../intake/target-line.ts";

export interface IntakeSweepDeps {
  prisma: PrismaClient;
  queues: QueueSet;
  dispatcher: Pick<FollowUpDispatcher, "dispatch">;
  transition: TransitionFn;
  logger: Logger;
  intervalMs: number;
  /** Follow-ups (and heads) younger than this are not judged. */
  graceMs: number;
}

/** Commands judged per pass at most: each costs a look at Redis. */
const SWEPT_PER_PASS = 100;

const intakeJobState = (queues: QueueSet) => (jobId: string) => queues.queues[QUEUE.intake].getJobState(jobId);

/**
 * A command waiting for its authorization (`received`): a route job Redis lost is queued again;
 * one that ended without routing it (its worker died again and again) turns the command away
 * saying so, rather than leaving it, and every command behind it in its line, waiting for ever.
 */
export function authorizationStep(deps: Pick<IntakeSweepDeps, "prisma" | "queues" | "transition" | "graceMs">): SweptStep {
  return {
    name: "authorization",
    // Only those the sweep may judge: a burst's backlog of young commands is left to the workers.
    waiting: () => listAwaitingAuthorization(deps.prisma, new Date(Date.now() - deps.graceMs), SWEPT_PER_PASS),
    jobState: intakeJobState(deps.queues),
    async release(step, state, logger) {
      const end = await readJobEnd(deps.queues.queues[QUEUE.intake], step.followUp.jobId, state);
      const failureReason = `${jobEndReason("authorization", end)}; post the command again`;
      return reportUnlessMovedOn(
        () => deps.transition(step.taskId, { type: "command.rejected", reason: "unroutable" }, { patch: { failureReason }, expectVersion: step.taskVersion }),
        logger,
        "the command moved on before the sweep settled it",
      );
    },
  };
}

/**
 * A command whose agents are done, waiting for its PR or answer to be published: a publish job
 * Redis lost is queued again; one whose worker kept dying fails the command saying so.
 */
export function publishStep(deps: Pick<IntakeSweepDeps, "prisma" | "queues" | "transition">): SweptStep {
  return {
    name: "publishing",
    async waiting() {
      const awaiting = await listAwaitingDevOrReview(deps.prisma);
      return awaiting.filter(({ source, followUp }) => source === "gitea" && followUp.queue === QUEUE.intake && (followUp.data as { kind?: string }).kind === "publish");
    },
    jobState: intakeJobState(deps.queues),
    async release(step, state, logger) {
      const end = await readJobEnd(deps.queues.queues[QUEUE.intake], step.followUp.jobId, state);
      const reason = `the work is done and pushed, but ${jobEndReason("publishing", end)}`;
      return reportUnlessMovedOn(
        () => deps.transition(step.taskId, { type: "run.failed", reason }, { expectVersion: step.taskVersion }),
        logger,
        "the command moved on before the sweep settled it",
      );
    },
  };
}

/**
 * The line pass: a command whose turn it is, with a free slot, in a line where nothing has changed
 * for the grace period, was never started because the dispatch that should have started it was
 * lost (Redis wiped, its job given up while Postgres was away). Its line is dispatched again.
 */
export async function dispatchStalledLines(
  deps: Pick<IntakeDeps, "db" | "queues" | "maxRunning" | "logger">,
  { graceMs, now = Date.now(), bucket }: { graceMs: number; now?: number; bucket: number },
): Promise<string[]> {
  if ((await runningCommands(deps.db.pool)) >= deps.maxRunning) return [];
  const stalled: string[] = [];
  for (const key of await waitingLines(deps.db.pool, 50)) {
    const headId = await startableHead(deps.db.pool, key);
    if (headId === undefined || !(await lineStillSince(deps.db.pool, key, new Date(now - graceMs)))) continue;
    deps.logger.warn({ taskId: headId, targetKey: key }, "a waiting command's turn came and nothing started it; its line is dispatched again");
    await deps.queues.enqueue({ queue: "intake", data: { v: 1, kind: "dispatch-next", targetKey: key }, jobId: `${headId}-dispatch-swept-${bucket}` });
    stalled.push(key);
  }
  return stalled;
}

/** The intake's sweeps, where intake jobs are taken: the two steps, and the line pass. Returns the stop. */
export function startIntakeSweep(deps: IntakeSweepDeps & { intake: Pick<IntakeDeps, "db" | "queues" | "maxRunning" | "logger"> }): () => Promise<void> {
  const stopSteps = startStepSweeper({ ...deps, name: "intake-sweeper" }, [authorizationStep(deps), publishStep(deps)]);
  const stopLines = startPeriodicTask({
    name: "gitea-line-pass",
    intervalMs: deps.intervalMs,
    logger: deps.logger,
    run: async () => void (await dispatchStalledLines(deps.intake, { graceMs: deps.graceMs, bucket: Math.floor(Date.now() / Math.max(1, deps.intervalMs)) })),
  });
  return async () => {
    await Promise.all([stopSteps(), stopLines()]);
  };
}
