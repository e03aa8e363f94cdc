import type { Repositories } from "@ratatoskr/db";
import type { Logger, QueueSet } from "@ratatoskr/runtime";
import { startPeriodicTask } from "@ratatoskr/runtime";

/**
 * Elapsed time, tokens and cost change while an agent works without any transition: every
 * `intervalMs` each running command's status comment is reconciled once (one job id per tick).
 */
export function startRunningStatusRefresher(deps: {
  repos: Repositories;
  queues: QueueSet;
  logger: Logger;
  intervalMs: number;
}): () => Promise<void> {
  return startPeriodicTask({
    name: "gitea-status-refresh",
    intervalMs: deps.intervalMs,
    logger: deps.logger,
    run: async () => {
      const tick = Math.floor(Date.now() / deps.intervalMs);
      const running = await deps.repos.tasks.listByStatus("gitea", ["running"]);
      await Promise.all(
        running.map((task) =>
          deps.queues.enqueue({
            queue: "notify",
            data: { v: 1, kind: "gitea-status", taskId: task.id },
            jobId: `${task.id}-refresh-${tick}`,
          }),
        ),
      );
    },
  });
}
