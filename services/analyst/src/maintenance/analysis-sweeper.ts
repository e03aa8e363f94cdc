import { QUEUE } from "@ratatoskr/contracts";
import { listAwaitingAnalysis, TaskEventRepository, type FollowUpDispatcher, type PrismaClient } from "@ratatoskr/db";
import { readJobEnd, runningStep, startStepSweeper, sweepStep, type SweepResult, type SweptStep } from "@ratatoskr/pipeline";
import type { Logger, QueueSet } from "@ratatoskr/runtime";
import { lostAnalysisProblem, releaseFailedAnalysis, type TransitionFn } from "../handlers/settle-analysis.ts";

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
 * back releases the analysis with a message saying how the job ended (its worker died, or it
 * failed), so the task never stays `analysing` silently; its pending turns are analysed again.
 */
export function analysisStep(deps: Omit<AnalysisSweeperDeps, "dispatcher" | "logger" | "graceMs">): SweptStep {
  return {
    name: "analysis",
    waiting: () => listAwaitingAnalysis(deps.prisma),
    jobState: (jobId) => deps.queues.queues[QUEUE.analyst].getJobState(jobId),
    release: async (step, state, logger) =>
      releaseFailedAnalysis(
        { transition: deps.transition, logger, taskId: step.taskId, events: new TaskEventRepository(deps.prisma) },
        lostAnalysisProblem(await readJobEnd(deps.queues.queues[QUEUE.analyst], step.followUp.jobId, state)),
        { expectVersion: step.taskVersion },
      ),
  };
}

/** A running command's planner (its plan or answer, G3): the running-step sweep on the analyst queue. */
export function plannerStep(deps: Omit<AnalysisSweeperDeps, "dispatcher" | "logger" | "graceMs">): SweptStep {
  return runningStep(deps, QUEUE.analyst);
}

export function sweepAnalyses(deps: AnalysisSweeperDeps): Promise<SweepResult> {
  return sweepStep(deps, analysisStep(deps));
}

/**
 * Runs the analysis sweep every `intervalMs`, with the planner's: a running command's plan or
 * answer whose job Redis lost is queued again, one whose job ended without reporting back fails
 * the command saying how. The returned function stops it.
 */
export function startAnalysisSweeper(deps: AnalysisSweeperDeps & { intervalMs: number }): () => Promise<void> {
  return startStepSweeper({ ...deps, name: "analysis-sweeper" }, [analysisStep(deps), plannerStep(deps)]);
}
