import { IllegalTransitionError } from "@ratatoskr/contracts";
import type { LinePlace, Task } from "@ratatoskr/db";
import type { IntakeDeps } from "./intake-deps.ts";
import { isWorkCommand } from "./intake-deps.ts";
import { agentPullRefusal, blockingAgentPull } from "./prepare-work.ts";
import type { ShownPositions } from "./shown-positions.ts";

/** One lock for every dispatch decision, per schema: replicas and services never start two at once. */
const LOCK = "SELECT pg_advisory_lock(hashtext(current_schema() || ':gitea-dispatch'))";
const UNLOCK = "SELECT pg_advisory_unlock(hashtext(current_schema() || ':gitea-dispatch'))";

const WAITING_TARGETS = `
SELECT target_key FROM tasks WHERE source = 'gitea' AND status = 'queued'
GROUP BY target_key ORDER BY min(id) LIMIT 200`;

/**
 * Starts what may start (G4): in each issue/PR only the oldest work command, only when nothing
 * runs there and the command ahead of it is no longer waiting for authorization; over all
 * targets at most `maxRunning`. The asked-for target goes first, then the others in the order
 * their oldest command arrived, so a freed slot is never left idle.
 */
export async function dispatchNext(deps: IntakeDeps, targetKey: string, shown: ShownPositions): Promise<number[]> {
  const client = await deps.db.pool.connect();
  let broken = false;
  try {
    await client.query(LOCK);
    try {
      return await startWhatMay(deps, targetKey, shown);
    } finally {
      await client.query(UNLOCK).catch(() => {
        broken = true;
      });
    }
  } finally {
    client.release(broken);
  }
}

async function startWhatMay(deps: IntakeDeps, first: string, shown: ShownPositions): Promise<number[]> {
  const running = await deps.db.prisma.task.count({ where: { source: "gitea", status: "running" } });
  const others = (await deps.db.pool.query<{ target_key: string }>(WAITING_TARGETS)).rows.map(
    (r) => r.target_key,
  );
  const targets = [first, ...others.filter((key) => key !== first)];
  const started: number[] = [];
  // Lines as read here, for the position updates after: read again only where a head was tried.
  const lines = new Map<string, LinePlace[]>();
  const moved = new Set([first]);
  let slots = deps.maxRunning - running;
  for (const key of targets) {
    if (slots <= 0) break;
    const line = (await deps.repos.tasks.listTargetLine(key)).filter((t) => isWorkCommand(t.commandKind));
    lines.set(key, line);
    const place = line[0];
    // A command paused by its budget still holds its line: the next one waits for continue or stop.
    if (!place || line.some((t) => t.status === "running" || t.status === "paused") || place.status !== "queued") continue;
    // Started or refused when its turn came: either way the line changed.
    lines.delete(key);
    const head = await deps.repos.tasks.findById(place.id);
    if (head && (await start(deps, head))) {
      started.push(head.id);
      moved.add(key);
      slots--;
    }
  }
  await refreshPositions(deps, [...moved], shown, lines);
  return started;
}

async function start(deps: IntakeDeps, task: Task): Promise<boolean> {
  try {
    const refusal = await refusalAtStart(deps, task);
    if (refusal) {
      await deps.transition(task.id, { type: "command.rejected", reason: "refused" }, { patch: { failureReason: refusal } });
      return false;
    }
    const applied = await deps.transition(task.id, { type: "command.started" });
    deps.logger.info(
      { taskId: task.id, targetKey: task.targetKey, kind: task.commandKind },
      "gitea command started",
    );
    return applied.task.status === "running";
  } catch (err) {
    if (err instanceof IllegalTransitionError) return false;
    throw err;
  }
}

/** `/agent implement` waited while another one opened an agent PR for the issue: refused now (G3). */
async function refusalAtStart(deps: IntakeDeps, task: Task): Promise<string | undefined> {
  if (task.commandKind !== "implement" || task.targetType !== "issue") return undefined;
  const where = { owner: task.repoOwner ?? "", repo: task.repoName ?? "" };
  const blocking = blockingAgentPull(await deps.gitea.listPullRequests(where, "all"), task.targetNumber ?? 0);
  return blocking ? agentPullRefusal(blocking) : undefined;
}

/** Waiting commands moved up, or joined the line: their status comments show the new position. */
async function refreshPositions(
  deps: IntakeDeps,
  targetKeys: string[],
  shown: ShownPositions,
  lines: ReadonlyMap<string, LinePlace[]>,
): Promise<void> {
  for (const key of targetKeys) {
    const line = lines.get(key) ?? (await deps.repos.tasks.listTargetLine(key));
    const waiting = line.filter((t) => isWorkCommand(t.commandKind) && t.status === "queued");
    const updates = waiting.map((t, index) => ({
      taskId: t.id,
      jobId: `${t.id}-position-${index + 1}-${t.version}`,
    }));
    const unsent = new Set(shown.unsent(key, updates.map((u) => u.jobId)));
    await Promise.all(
      updates
        .filter((u) => unsent.has(u.jobId))
        .map((u) =>
          deps.queues.enqueue({
            queue: "notify",
            data: { v: 1, kind: "gitea-status", taskId: u.taskId },
            jobId: u.jobId,
          }),
        ),
    );
    shown.remember(key, updates.map((u) => u.jobId));
  }
}
