import type { Database, Repositories, Task } from "@ratatoskr/db";
import { isNotFound, WORK_COMMANDS, type GiteaClient } from "@ratatoskr/gitea";
import { RetryLaterError, type QueueSet } from "@ratatoskr/runtime";
import { readLiveRun } from "../progress/live-run.ts";
import { postPendingReplies } from "./reply-comments.ts";
import { hasMarker, renderStatusComment, type StatusFacts } from "./status-comment.renderer.ts";

const WORK: ReadonlySet<string> = new Set(WORK_COMMANDS);

export interface StatusCommentDeps {
  db: Database;
  repos: Repositories;
  gitea: GiteaClient;
  /** Read for the running agent job's live progress (O6). */
  queues: QueueSet["queues"];
}

export type ReconcileResult =
  | { action: "edited" | "created" | "found-by-marker"; commentId: number }
  | { action: "skipped"; why: string };

const TRY_LOCK = "SELECT pg_try_advisory_lock(hashtext(current_schema() || ':gitea-status'), $1) AS locked";
const UNLOCK = "SELECT pg_advisory_unlock(hashtext(current_schema() || ':gitea-status'), $1)";

async function factsOf(deps: StatusCommentDeps, task: Task): Promise<StatusFacts> {
  const { prisma } = deps.db;
  const waits = task.status === "queued" && task.targetKey !== null && WORK.has(task.commandKind ?? "");
  const [started, latest, sums, ahead] = await Promise.all([
    // The command's start is the transition into running; every stage after it is running → running.
    prisma.taskEvent.findFirst({
      where: { taskId: task.id, toStatus: "running", fromStatus: { not: "running" } },
      orderBy: { id: "desc" },
    }),
    prisma.agentTrace.findFirst({ where: { taskId: task.id }, orderBy: { startedAt: "desc" } }),
    prisma.agentTrace.aggregate({
      where: { taskId: task.id },
      _sum: { tokensInput: true, tokensOutput: true, tokensReasoning: true, cost: true },
    }),
    // Its place among the work commands waiting in its issue/PR's line (the running or budget-paused
    // one holds the head), counted in Postgres: a long line is not read row by row for each comment.
    waits
      ? prisma.task.count({
          where: { targetKey: task.targetKey, id: { lt: task.id }, status: { in: ["received", "queued"] }, commandKind: { in: [...WORK] } },
        })
      : Promise.resolve(undefined),
  ]);
  const s = sums._sum;
  // A run in progress: its newest tool, and what it spent so far (its trace holds that once it ends).
  const live = task.status === "running" ? await readLiveRun(deps.queues, latest) : undefined;
  return {
    ...(ahead !== undefined ? { position: ahead + 1 } : {}),
    ...(started ? { startedAt: started.createdAt } : {}),
    // The round of the agent's own run: between a rejecting review and the next dev run the task is a round ahead.
    ...(latest ? { stage: latest.agent, stageRound: latest.round ?? task.round } : {}),
    ...(live?.lastTool ? { lastTool: live.lastTool } : {}),
    tokens: (s.tokensInput ?? 0) + (s.tokensOutput ?? 0) + (s.tokensReasoning ?? 0) + (live?.tokens ?? 0),
    costUsd: (s.cost ?? 0) + (live?.costUsd ?? 0),
    now: new Date(),
  };
}

/**
 * Brings one command's status comment in line with its task (G5). A Postgres advisory lock per
 * task makes every notifier replica take turns, so one command never gets two comments. The
 * stored comment is edited; if it is gone, the comment carrying the task's hidden marker is
 * adopted (a create whose id was never stored), else exactly one new comment is made.
 */
export async function reconcileStatusComment(
  deps: StatusCommentDeps,
  taskId: number,
): Promise<ReconcileResult> {
  const client = await deps.db.pool.connect();
  let broken = false;
  try {
    const { rows } = await client.query<{ locked: boolean }>(TRY_LOCK, [taskId]);
    if (!rows[0]?.locked) throw new RetryLaterError(300, `status comment of task ${taskId} is being written`);
    try {
      return await reconcileLocked(deps, taskId);
    } finally {
      await client.query(UNLOCK, [taskId]).catch(() => {
        broken = true;
      });
    }
  } finally {
    client.release(broken);
  }
}

async function reconcileLocked(deps: StatusCommentDeps, taskId: number): Promise<ReconcileResult> {
  const task = await deps.repos.tasks.findById(taskId);
  if (!task || task.source !== "gitea")
    return { action: "skipped", why: `task ${taskId} is not a Gitea command` };
  const where = { owner: task.repoOwner ?? "", repo: task.repoName ?? "" };
  const number = task.targetNumber ?? 0;
  const result = await reconcileStatus(deps, task, where, number);
  await deps.repos.tasks.markStatusCommentShown(taskId, task.version);
  // After the status comment, so a reply reads below the status it explains.
  await postPendingReplies({ prisma: deps.db.prisma, gitea: deps.gitea }, taskId, where, number);
  return result;
}

async function reconcileStatus(
  deps: StatusCommentDeps,
  task: Task,
  where: { owner: string; repo: string },
  number: number,
): Promise<ReconcileResult> {
  const taskId = task.id;
  const body = renderStatusComment(task, await factsOf(deps, task));
  if (task.statusCommentId !== null) {
    try {
      await deps.gitea.editComment(where, Number(task.statusCommentId), body);
      return { action: "edited", commentId: Number(task.statusCommentId) };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  const existing = (await deps.gitea.listIssueComments(where, number)).find((c) => hasMarker(c.body, taskId));
  if (existing?.id) {
    await deps.gitea.editComment(where, existing.id, body);
    await deps.repos.tasks.setStatusComment(taskId, existing.id);
    return { action: "found-by-marker", commentId: existing.id };
  }
  const created = await deps.gitea.createComment(where, number, body);
  await deps.repos.tasks.setStatusComment(taskId, created.id ?? 0);
  return { action: "created", commentId: created.id ?? 0 };
}
