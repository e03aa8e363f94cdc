/**
 * The one statement that writes a transition: the task row (guarded by the version it was read
 * at), its event, notifications and outbox rows. Pure query building, no I/O.
 */
import type { TaskEvent } from "@ratatoskr/contracts";
import type { FollowUp, Task } from "../../generated/client.ts";
import { prismaLikeTypes } from "../sql/sql-pool.ts";
import { statementName } from "../sql/statement-name.ts";
import type { TransitionPlan } from "./transition-plan.ts";
import type { TaskPatch } from "./transition-types.ts";

/** Patch fields and their columns, with the cast each value needs. */
const PATCH_COLUMNS: Record<keyof TaskPatch, string> = {
  title: "title = $::text",
  goal: "goal = $::text",
  repos: "repos = $::text[]",
  why: "why = $::text",
  acceptanceCriteria: "acceptance_criteria = $::text[]",
  branch: "branch = $::text",
  prUrl: "pr_url = $::text",
  agentSessionId: "agent_session_id = $::text",
  agentServerUrl: "agent_server_url = $::text",
  failureReason: "failure_reason = $::text",
  statusCommentId: "status_comment_id = $::bigint",
  resultText: "result_text = $::text",
  locale: "locale = $::text",
  finishedAt: "finished_at = $::timestamp",
};

/** Writes nothing, rather than wait, while another transaction holds the row locked. */
const SKIP_LOCKED = " AND id = (SELECT id FROM tasks WHERE id = $1 FOR UPDATE SKIP LOCKED)";

/**
 * Every write of a transition in one statement: the task, its event, notifications, outbox rows.
 * The UPDATE matches only while the row still has the version and `updated_at` the plan was made
 * from ($26, $27; a Prisma update of other columns moves `updated_at`); everything else is written
 * only if it matched, so a lost race writes nothing and returns no row. It returns the task row as
 * written, with the outbox rows in `follow_ups_json`.
 */
const WRITE = (patchSet: string, skipLocked: boolean) => `
WITH t AS (
  UPDATE tasks SET status = $2, version = $3, turn_count = $4, pending_turns = $5, analysing = $6,
    skip_requested = $7, round = $8, max_turns = $9, max_rounds = $10, finished_at = $11::timestamp,
    updated_at = $12::timestamp, budget_usd = $24::float8, paused_step = $25::text${patchSet}
  WHERE id = $1 AND version = $26 AND updated_at = $27::timestamp${skipLocked ? SKIP_LOCKED : ""} RETURNING *
), e AS (
  INSERT INTO task_events (task_id, version, type, payload, from_status, to_status, created_at)
  SELECT $1, $3, $13, $14::jsonb, $15, $2, $12::timestamp FROM t
), n AS (
  SELECT u.ord, nextval(pg_get_serial_sequence('notifications', 'id'))::int AS id,
    u.channel, u.chat_id, u.template, u.params
  FROM t, unnest($16::text[], $17::bigint[], $18::text[], $19::jsonb[]) WITH ORDINALITY
    AS u(channel, chat_id, template, params, ord)
), ni AS (
  INSERT INTO notifications (id, task_id, channel, chat_id, thread_id, template, params, created_at)
  SELECT n.id, $1, n.channel, n.chat_id, CASE WHEN n.channel = 'telegram' THEN t.thread_id END, n.template, n.params,
    $12::timestamp FROM n, t
), f AS (
  INSERT INTO follow_ups (task_id, queue, job_id, data, created_at)
  SELECT $1, fu.queue, fu.job_id,
    CASE WHEN n.id IS NULL THEN fu.data ELSE fu.data || jsonb_build_object('notificationId', n.id) END,
    $12::timestamp
  FROM unnest($20::text[], $21::text[], $22::jsonb[], $23::int[]) WITH ORDINALITY
    AS fu(queue, job_id, data, nord, ford)
  LEFT JOIN n ON n.ord = fu.nord
  WHERE EXISTS (SELECT 1 FROM t)
  ORDER BY fu.ford
  RETURNING id, task_id, queue, job_id, data, created_at, dispatched_at
)
SELECT t.*, (SELECT coalesce(json_agg(f ORDER BY f.id), '[]'::json) FROM f) AS follow_ups_json FROM t`;

function sqlValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  return value;
}

export function writeQuery(
  row: Task,
  event: TaskEvent,
  plan: TransitionPlan,
  patch: TaskPatch,
  now: Date,
  { skipLocked = false } = {},
) {
  const { columns } = plan;
  const finishedAt = patch.finishedAt !== undefined ? patch.finishedAt : columns.finishedAt;
  const values: unknown[] = [
    row.id,
    columns.status,
    columns.version,
    columns.turnCount,
    columns.pendingTurns,
    columns.analysing,
    columns.skipRequested,
    columns.round,
    columns.maxTurns,
    columns.maxRounds,
    sqlValue(finishedAt),
    now.toISOString(),
    event.type,
    JSON.stringify(event),
    row.status,
    plan.notifications.map((n) => n.channel),
    plan.notifications.map((n) => sqlValue(n.chatId)),
    plan.notifications.map((n) => n.template),
    plan.notifications.map((n) => JSON.stringify(n.params)),
    plan.followUps.map((f) => f.queue),
    plan.followUps.map((f) => f.jobId),
    plan.followUps.map((f) => JSON.stringify(f.data)),
    plan.followUps.map((f) => (f.notification === undefined ? null : f.notification + 1)),
    columns.budgetUsd ?? null,
    columns.pausedStep ?? null,
    row.version,
    sqlValue(row.updatedAt),
  ];
  const keys = (Object.keys(patch) as (keyof TaskPatch)[])
    .filter((key) => key !== "finishedAt" && patch[key] !== undefined && key in PATCH_COLUMNS)
    .sort();
  let patchSet = "";
  for (const key of keys) {
    values.push(sqlValue(patch[key]));
    patchSet += `, ${PATCH_COLUMNS[key].replace("$", `$${values.length}`)}`;
  }
  // Named, so each connection plans each shape once.
  return {
    name: statementName(`rt-transition${skipLocked ? "-skip-locked" : ""}`, keys.join(",")),
    text: WRITE(patchSet, skipLocked),
    values,
    types: prismaLikeTypes,
  };
}

export interface FollowUpJson {
  id: number;
  task_id: number;
  queue: string;
  job_id: string;
  data: FollowUp["data"];
  created_at: string;
  dispatched_at: string | null;
}

const utc = (value: string) => new Date(`${value}Z`);

export function toFollowUp(row: FollowUpJson): FollowUp {
  return {
    id: row.id,
    taskId: row.task_id,
    queue: row.queue,
    jobId: row.job_id,
    data: row.data,
    createdAt: utc(row.created_at),
    dispatchedAt: row.dispatched_at === null ? null : utc(row.dispatched_at),
  };
}
