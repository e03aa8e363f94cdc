import type { Repositories } from "@ratatoskr/db";
import type { Logger, QueueSet } from "@ratatoskr/runtime";
import { startPeriodicTask } from "@ratatoskr/runtime";
import { REPLY_TEMPLATES } from "./reply-comments.ts";

/** A command whose status comment lags its task this long after it changed (and no longer than a day) is brought up to date. */
const LAG_LIMIT_MS = 24 * 3_600_000;

/**
 * Elapsed time, tokens and cost change while an agent works without any transition: every
 * `intervalMs` each running command's status comment is reconciled once (one job id per tick),
 * and so is each command with a reply waiting longer than that, and each whose comment still
 * shows an older version of it a tick after it changed (its update was lost with Redis).
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
      const running = (await deps.repos.tasks.listByStatus("gitea", ["running"])).map((task) => task.id);
      // A reply (a postmortem) whose job was lost is posted by the next reconcile.
      const replying = await deps.repos.notifications.listTasksWithPendingGitea(REPLY_TEMPLATES, deps.intervalMs);
      const now = Date.now();
      const lagging = await deps.repos.tasks.listLaggingStatusComments(new Date(now - LAG_LIMIT_MS), new Date(now - deps.intervalMs), 200);
      await Promise.all(
        [...new Set([...running, ...replying, ...lagging])].map((taskId) =>
          deps.queues.enqueue({
            queue: "notify",
            data: { v: 1, kind: "gitea-status", taskId },
            jobId: `${taskId}-refresh-${tick}`,
          }),
        ),
      );
    },
  });
}
