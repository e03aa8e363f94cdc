import type { TaskRepository } from "@ratatoskr/db";
import type { AgentRunResult } from "@ratatoskr/opencode";
import { watchSpend, type RunBudget } from "./spend-watch.ts";
import { watchTaskStatus } from "./task-status-watch.ts";
import { runTraced, type TracedRunDeps, type TracedRunInput } from "./traced-run.ts";

export interface WatchedRunDeps extends TracedRunDeps {
  tasks: TracedRunDeps["tasks"] & Pick<TaskRepository, "findById">;
  /** How often the task's status is re-read during the run. */
  statusPollMs: number;
}

export interface WatchedRunInput<T> extends Omit<TracedRunInput<T>, "run"> {
  run: Omit<TracedRunInput<T>["run"], "signal">;
  /** The job's signal: aborted by shutdown. */
  signal: AbortSignal;
  /** For logs and errors: `dev run`, `review`, `planner run`. */
  what: string;
  /** The task's budget: the run is stopped once its live spend takes the task past it (P5). */
  budget?: RunBudget | undefined;
}

/** The run's result, and the status that stopped it when the task left `running` (cancelled, deleted…). */
export interface WatchedRunResult<T> {
  stoppedBy: string | undefined;
  result: AgentRunResult<T>;
  /** Set when the run was stopped because the task's spend passed its budget. */
  overBudget?: RunBudget | undefined;
}

/**
 * {@link runTraced} while the task stays `running`: the task's status is re-read every
 * `statusPollMs` and the run interrupted once it left (`/cancel`). A run the shutdown interrupted
 * throws, so the job goes back to the queue. With a `budget`, a run whose live spend passes it is
 * interrupted too (`overBudget`); its session stays for a Continue to resume.
 */
export async function runWhileTaskRuns<T>(deps: WatchedRunDeps, input: WatchedRunInput<T>): Promise<WatchedRunResult<T>> {
  const { signal, what, run, budget, ...traced } = input;
  const watch = watchTaskStatus({
    readStatus: async () => (await deps.tasks.findById(input.taskId))?.status,
    continueIn: new Set(["running"]),
    intervalMs: deps.statusPollMs,
    parent: signal,
    onError: (err) => deps.logger.warn({ err }, `could not re-read the task during the ${what}`),
  });
  const spend = budget ? watchSpend(budget) : undefined;
  const runSignal = spend ? AbortSignal.any([watch.signal, spend.signal]) : watch.signal;
  let result: AgentRunResult<T>;
  try {
    result = await runTraced(deps, { ...traced, run: { ...run, signal: runSignal }, onLive: spend?.observe });
  } finally {
    watch.stop();
  }
  const stoppedBy = watch.stoppedBy();
  if (stoppedBy === undefined && signal.aborted) throw new Error(`${what} interrupted by shutdown; the job goes back to the queue`);
  const overBudget = stoppedBy === undefined ? spend?.exceeded() : undefined;
  return { stoppedBy, result, ...(overBudget ? { overBudget } : {}) };
}
