import { QUEUE } from "@ratatoskr/contracts";
import { listAwaitingAnalysis, type FollowUpDispatcher, type PrismaClient } from "@ratatoskr/db";
import { startStepSweeper, sweepStep, type SweepResult, type SweptStep } from "@ratatoskr/pipeline";
import type { Logger, QueueSet } from "@ratatoskr/runtime";
import { releaseFailedAnalysis, type TransitionFn } from "../handlers/settle-analysis.ts";

export type { SweepResult } from "@ratatoskr/pipeline";

export interface AnalysisSweeperDeps {
  prisma: PrismaClient;
  queues: Pick<QueueSet, "queues">;
  dispatcher: Pick<FollowUpDispatcher, "dispatch">;
  transition: TransitionFn;
  logger: Logger;
  /** Follow-ups younger than this are not judged (default 30 s). */
  graceMs?: number;
}

/**
 * The analysis step for the Postgres-driven sweep: every task that waits on an analysis
 * (`collecting` and `analysing`) with its newest analyst job. A job that ended without reporting
 * back releases the analysis with a message to the person, so the task never stays `analysing`
 * silently and the next message starts a new one.
 */
export function analysisStep(deps: Omit<AnalysisSweeperDeps, "dispatcher" | "logger" | "graceMs">): SweptStep {
  return {
    name: "analysis",
    waiting: () => listAwaitingAnalysis(deps.prisma),
    jobState: (jobId) => deps.queues.queues[QUEUE.analyst].getJobState(jobId),
    release: (step, _state, logger) => releaseFailedAnalysis({ transition: deps.transition, logger, taskId: step.taskId }, "unavailable"),
  };
}

export function sweepAnalyses(deps: AnalysisSweeperDeps): Promise<SweepResult> {
  return sweepStep(deps, analysisStep(deps));
}

/** Runs the analysis sweep every `intervalMs`; the returned function stops it. */
export function startAnalysisSweeper(deps: AnalysisSweeperDeps & { intervalMs: number }): () => Promise<void> {
  return startStepSweeper({ ...deps, name: "analysis-sweeper" }, [analysisStep(deps)]);
}
