import { FINAL_STATUSES, type TaskStatus } from "@ratatoskr/contracts";
import type { TaskRepository } from "@ratatoskr/db";
import type { GitWorkspaces } from "@ratatoskr/git";
import { startPeriodicTask, type Logger } from "@ratatoskr/runtime";
import { remoteSpecOf, type GitHostConfig } from "../config/git-host.config.ts";

const FINAL: readonly TaskStatus[] = [...FINAL_STATUSES];

export interface WorkspaceReleaseDeps {
  git: Pick<GitWorkspaces, "unfinishedTaskIds" | "markFinished" | "clearFinished" | "sweep">;
  tasks: Pick<TaskRepository, "whichInStatus">;
  /**
   * Tasks a job is still working on (BullMQ's active jobs of the service's queues): a task ends
   * before its job does (a /cancel, a timeout: the job still pushes what was done), so an ended
   * task's trees are left alone until no job of it runs.
   */
  inUse(): Promise<ReadonlySet<number>>;
  logger: Logger;
}

export interface WorkspaceReleaseResult {
  /** Tasks whose trees were marked finished in this pass. */
  marked: number[];
  /** Tasks whose trees were removed (finished longer ago than the retention). */
  removed: number[];
}

/**
 * One pass over a service's working trees: the trees of tasks Postgres says have ended are
 * marked finished once no job of them runs (the retention counts from here), then the trees
 * finished longer ago than WORKSPACE_RETENTION_MS are removed. A task that moved on again between
 * the read and the mark (a /continue, a /retry) gets its mark taken back, and its next job's
 * prepare clears it too.
 */
export async function releaseFinishedWorkspaces(deps: WorkspaceReleaseDeps): Promise<WorkspaceReleaseResult> {
  const open = await deps.git.unfinishedTaskIds();
  const busy = await deps.inUse();
  const ended = (await deps.tasks.whichInStatus(open, FINAL)).filter((taskId) => !busy.has(taskId));
  for (const taskId of ended) await deps.git.markFinished(taskId);
  const still = new Set(await deps.tasks.whichInStatus(ended, FINAL));
  const marked: number[] = [];
  for (const taskId of ended) {
    if (still.has(taskId)) marked.push(taskId);
    else await deps.git.clearFinished(taskId);
  }
  if (marked.length > 0) deps.logger.info({ tasks: marked }, "workspaces of ended tasks marked finished");
  const { removed } = await deps.git.sweep();
  return { marked, removed };
}

/** {@link releaseFinishedWorkspaces} every `intervalMs`; returns the function that stops it. */
export function startWorkspaceRelease(deps: WorkspaceReleaseDeps & { intervalMs: number; name: string }): () => Promise<void> {
  return startPeriodicTask({
    name: deps.name,
    intervalMs: deps.intervalMs,
    logger: deps.logger,
    run: async () => {
      await releaseFinishedWorkspaces(deps);
    },
  });
}

/** The release of a service's trees, when it has a git host (without one there are no trees). */
export function startGitWorkspaceRelease(config: GitHostConfig, deps: WorkspaceReleaseDeps, name: string): (() => Promise<void>) | undefined {
  if (!remoteSpecOf(config)) return undefined;
  return startWorkspaceRelease({ ...deps, intervalMs: config.workspaceSweepIntervalMs ?? 600_000, name });
}

/** {@link WorkspaceReleaseDeps.inUse} from the queues whose jobs work in the trees. */
export function activeJobTasks(queues: ReadonlyArray<{ getActive(): Promise<ReadonlyArray<{ data: unknown }>> }>): () => Promise<ReadonlySet<number>> {
  return async () => {
    const ids = new Set<number>();
    for (const queue of queues) {
      for (const job of await queue.getActive()) {
        const taskId = (job.data as { taskId?: unknown } | undefined)?.taskId;
        if (typeof taskId === "number") ids.add(taskId);
      }
    }
    return ids;
  };
}
