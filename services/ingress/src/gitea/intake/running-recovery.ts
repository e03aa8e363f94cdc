import { IllegalTransitionError } from "@ratatoskr/contracts";
import { runHeartbeatKey } from "@ratatoskr/gitea";
import type { Redis } from "@ratatoskr/runtime";
import type { IntakeDeps } from "./intake-deps.ts";

/** A command just started may wait this long for a worker before its heartbeat counts. */
export const START_GRACE_MS = 60_000;

/**
 * The agents whose jobs still keep a run heartbeat: the planner, a Gitea-only step. Dev and
 * review runs follow the pipeline's one rule for a process killed mid-run on every door: the job
 * is retried and resumes the run's own session (the step sweep settles a job that is gone), so
 * they are never judged here.
 */
const HEARTBEAT_AGENTS = ["planner"];

/**
 * G6: a `running` command with a planner run that never ended (an unfinished trace)
 * and whose run heartbeat expired lost the process mid-turn. It is failed with a clear reason (never
 * replayed), its session interrupted, and the next command of its issue/PR goes on (the
 * failure's dispatch-next effect). A command between two steps (no unfinished run, its next job
 * waiting for a busy worker) is left alone however long it waits.
 */
export async function failOrphanedRuns(
  deps: IntakeDeps,
  redis: Redis,
  prefix: string,
  { now = Date.now(), graceMs = START_GRACE_MS }: { now?: number; graceMs?: number } = {},
): Promise<number[]> {
  const running = await deps.repos.tasks.listByStatus("gitea", ["running"]);
  const failed: number[] = [];
  for (const task of running) {
    if (now - task.updatedAt.getTime() < graceMs) continue;
    if ((await redis.exists(runHeartbeatKey(prefix, task.id))) === 1) continue;
    const midTurn = await deps.db.prisma.agentTrace.count({ where: { taskId: task.id, endedAt: null, agent: { in: HEARTBEAT_AGENTS } } });
    if (midTurn === 0) continue;
    try {
      await deps.transition(
        task.id,
        {
          type: "run.failed",
          reason:
            "the service running this command stopped mid-turn (restart or crash); the turn is not replayed — comment the command again to retry",
        },
        {
          // Only as it was judged: a run that ended or a heartbeat since moves the version.
          expectVersion: task.version,
        },
      );
      failed.push(task.id);
    } catch (err) {
      if (err instanceof IllegalTransitionError) continue;
      throw err;
    }
    if (task.agentServerUrl && task.agentSessionId) {
      await deps
        .interrupt(task.agentServerUrl, task.agentSessionId)
        .catch((err: unknown) =>
          deps.logger.warn({ err, taskId: task.id }, "could not interrupt the orphaned session"),
        );
    }
  }
  if (failed.length > 0) deps.logger.warn({ failed }, "failed gitea commands whose run stopped mid-turn");
  return failed;
}
