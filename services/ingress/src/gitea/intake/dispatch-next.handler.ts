import { IllegalTransitionError } from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import type { IntakeDeps } from "./intake-deps.ts";
import { agentPullRefusal, blockingAgentPull } from "./prepare-work.ts";
import type { ShownPositions } from "./shown-positions.ts";
import { runningCommands, startableHead, waitingLines, waitingPlaces } from "./target-line.ts";

/** One lock for every dispatch decision, per schema: replicas and services never start two at once. */
const LOCK = "SELECT pg_advisory_lock(hashtext(current_schema() || ':gitea-dispatch'))";
const UNLOCK = "SELECT pg_advisory_unlock(hashtext(current_schema() || ':gitea-dispatch'))";

/**
 * Starts what may start (G4): in each issue/PR only the oldest work command, only when nothing
 * runs there and the command ahead of it is no longer waiting for authorization; over all
 * targets at most `maxRunning`. The asked-for target goes first, then the others in the order
 * their oldest command arrived, so a freed slot is never left idle. `joined`: the command whose
 * joining the line asked for this; when nothing starts there, only it and those behind it moved.
 */
export async function dispatchNext(deps: IntakeDeps, targetKey: string, shown: ShownPositions, joined?: number): Promise<number[]> {
  const client = await deps.db.pool.connect();
  let broken = false;
  try {
    await client.query(LOCK);
    try {
      return await startWhatMay(deps, targetKey, shown, joined);
    } finally {
      await client.query(UNLOCK).catch(() => {
        broken = true;
      });
    }
  } finally {
    client.release(broken);
  }
}

async function startWhatMay(deps: IntakeDeps, first: string, shown: ShownPositions, joined: number | undefined): Promise<number[]> {
  let slots = deps.maxRunning - (await runningCommands(deps.db.pool));
  const started: number[] = [];
  const moved = new Set<string>();
  const tryTarget = async (key: string) => {
    const headId = await startableHead(deps.db.pool, key);
    if (headId === undefined) return;
    // Started or refused when its turn came: either way the line moved.
    moved.add(key);
    const head = await deps.repos.tasks.findById(headId);
    if (head && (await start(deps, head))) {
      started.push(head.id);
      slots--;
    }
  };
  if (slots > 0) await tryTarget(first);
  if (slots > 0) {
    for (const key of await waitingLines(deps.db.pool, 200)) {
      if (slots <= 0) break;
      if (key !== first) await tryTarget(key);
    }
  }
  await refreshPositions(deps, shown, first, moved.has(first) ? undefined : joined);
  for (const key of moved) if (key !== first) await refreshPositions(deps, shown, key, undefined);
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

/**
 * Waiting commands moved up, or joined the line: their status comments show the new position.
 * `joined` alone joined (nothing left or started): only it and those behind it are read.
 */
async function refreshPositions(deps: IntakeDeps, shown: ShownPositions, key: string, joined: number | undefined): Promise<void> {
  const places = await waitingPlaces(deps.db.pool, key, joined);
  const notices = places.map((p) => ({ taskId: p.id, jobId: `${p.id}-position-${p.pos}-${p.version}` }));
  await Promise.all(
    shown.unsent(key, notices).map((n) =>
      deps.queues.enqueue({ queue: "notify", data: { v: 1, kind: "gitea-status", taskId: n.taskId }, jobId: n.jobId }),
    ),
  );
  shown.remember(key, notices, joined === undefined);
}
