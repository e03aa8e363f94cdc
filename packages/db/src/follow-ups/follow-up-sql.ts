import { QUEUE, type TaskSource } from "@ratatoskr/contracts";
import type { FollowUp, PrismaClient } from "../../generated/client.ts";
import { camelRow, prismaLikeTypes, requireSqlPool } from "../sql/sql-pool.ts";

/**
 * The periodic idle reads of follow-ups (the reconciler, the step sweeps) in plain SQL on the pg
 * pool: through Prisma they would load its query compiler into an idle process (~10 MB of RSS).
 * Rows come back exactly as Prisma's would. JS instants go in as UTC text cast to `timestamp`,
 * as Prisma writes them.
 */

/** A task waiting on a job, with its newest follow-up on the step's queues. */
export interface AwaitedFollowUp {
  taskId: number;
  /**
   * The task's version when it was read with its follow-up: a repair settles the task only while
   * it is unchanged (`expectVersion`), since any transition since (the step reporting back, a
   * newer follow-up) moves it.
   */
  taskVersion: number;
  /** The door it came through: what the person is told to do next depends on it. */
  source: TaskSource;
  followUp: FollowUp;
}

const LIST_UNDISPATCHED = `SELECT * FROM follow_ups
  WHERE dispatched_at IS NULL AND created_at <= $1::timestamp
  ORDER BY id LIMIT $2`;

/** Each task's newest follow-up on the queues $1, for the tasks the WHERE clause picks. */
const newestFollowUp = (taskWhere: string) => `SELECT f.*, t.version AS awaited_task_version, t.source AS awaited_task_source FROM tasks t
  CROSS JOIN LATERAL (SELECT * FROM follow_ups f WHERE f.task_id = t.id AND f.queue = ANY($1::text[])
    ORDER BY f.id DESC LIMIT 1) f
  WHERE ${taskWhere}
  ORDER BY t.id`;

const AWAITING_ANALYSIS = newestFollowUp(`t.status = 'collecting' AND t.analysing`);
const AWAITING_DEV_OR_REVIEW = newestFollowUp(`t.status IN ('approved', 'running')`);
/** $2, $3: only route jobs asked for by then (a burst's young backlog is no one's to judge), at most so many. */
const AWAITING_AUTHORIZATION = `${newestFollowUp(`t.source = 'gitea' AND t.status = 'received' AND f.created_at <= $2::timestamp`)}
  LIMIT $3`;
/** $2: only failures with a postmortem asked since then; $3: the templates that answer one. */
const AWAITING_POSTMORTEM = newestFollowUp(`t.status IN ('failed', 'timeout')
    AND EXISTS (SELECT 1 FROM follow_ups p WHERE p.task_id = t.id AND p.queue = ANY($1::text[]) AND p.created_at >= $2::timestamp)
    AND NOT EXISTS (SELECT 1 FROM notifications n
      WHERE n.task_id = t.id AND n.template = ANY($3::text[]) AND n.created_at >= f.created_at)`);

async function queryRows(prisma: PrismaClient, name: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
  return (await requireSqlPool(prisma).query({ name, text, values, types: prismaLikeTypes })).rows as Record<string, unknown>[];
}

async function awaited(prisma: PrismaClient, name: string, text: string, values: unknown[]): Promise<AwaitedFollowUp[]> {
  return (await queryRows(prisma, name, text, values)).map(({ awaited_task_version: taskVersion, awaited_task_source: source, ...row }) => {
    const followUp = camelRow<FollowUp>(row);
    return { taskId: followUp.taskId, taskVersion: Number(taskVersion), source: String(source) as TaskSource, followUp };
  });
}

/** Not yet dispatched and created at or before `createdBy`, oldest first. */
export function listUndispatchedFollowUps(prisma: PrismaClient, createdBy: Date, limit: number): Promise<FollowUp[]> {
  return queryRows(prisma, "rt-follow-ups-undispatched", LIST_UNDISPATCHED, [createdBy.toISOString(), limit]).then((rows) =>
    rows.map((row) => camelRow<FollowUp>(row)),
  );
}

/** Tasks in `collecting` with an analysis running, with their newest analyst follow-up. */
export async function listAwaitingAnalysis(prisma: PrismaClient): Promise<AwaitedFollowUp[]> {
  return awaited(prisma, "rt-awaiting-analysis", AWAITING_ANALYSIS, [[QUEUE.analyst]]);
}

/**
 * Tasks of every door `approved` or `running`, with their newest follow-up on a pipeline step's
 * queue (a command's planner and publish steps included, so a task past its dev or review step
 * is not taken for waiting on it); the step sweeps judge those on their own queue.
 */
export async function listAwaitingDevOrReview(prisma: PrismaClient): Promise<AwaitedFollowUp[]> {
  return awaited(prisma, "rt-awaiting-dev-review", AWAITING_DEV_OR_REVIEW, [[QUEUE.dev, QUEUE.review, QUEUE.analyst, QUEUE.intake]]);
}

/**
 * Gitea commands not yet authorized (`received`) whose route job (their newest intake follow-up)
 * was asked for at or before `askedBy`, the oldest `limit`.
 */
export async function listAwaitingAuthorization(prisma: PrismaClient, askedBy: Date, limit: number): Promise<AwaitedFollowUp[]> {
  return awaited(prisma, "rt-awaiting-authorization", AWAITING_AUTHORIZATION, [[QUEUE.intake], askedBy.toISOString(), limit]);
}

/**
 * Failed or timed-out tasks with a postmortem asked at or after `since`, with their newest
 * postmortem follow-up, unless a message with one of `sentTemplates` was stored at or after it.
 */
export async function listAwaitingPostmortem(
  prisma: PrismaClient,
  since: Date,
  sentTemplates: readonly string[],
): Promise<AwaitedFollowUp[]> {
  const values = [[QUEUE.postmortem], since.toISOString(), [...sentTemplates]];
  return awaited(prisma, "rt-awaiting-postmortem", AWAITING_POSTMORTEM, values);
}
