import type { TaskRepository } from "@ratatoskr/db";
import type { AgentRunResult } from "@ratatoskr/opencode";
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
}

/** The run's result, and the status that stopped it when the task left `running` (cancelled, deleted…). */
export interface WatchedRunResult<T> {
  stoppedBy: string | undefined;
  result: AgentRunResult<T>;
}

/**
 * {@link runTraced} while the task stays `running`: the task's status is re-read every
 * `statusPollMs` and the run interrupted once it left (`/cancel`). A run the shutdown interrupted
 * throws, so the job goes back to the queue.
 */
export async function runWhileTaskRuns<T>(deps: WatchedRunDeps, input: WatchedRunInput<T>): Promise<WatchedRunResult<T>> {
  const { signal, what, run, ...traced } = input;
  const watch = watchTaskStatus({
    readStatus: async () => (await deps.tasks.findById(input.taskId))?.status,
    continueIn: new Set(["running"]),
    intervalMs: deps.statusPollMs,
    parent: signal,
    onError: (err) => deps.logger.warn({ err }, `could not re-read the task during the ${what}`),
  });
  let result: AgentRunResult<T>;
  try {
    result = await runTraced(deps, { ...traced, run: { ...run, signal: watch.signal } });
  } finally {
    watch.stop();
  }
  const stoppedBy = watch.stoppedBy();
  if (stoppedBy === undefined && signal.aborted) throw new Error(`${what} interrupted by shutdown; the job goes back to the queue`);
  return { stoppedBy, result };
}
