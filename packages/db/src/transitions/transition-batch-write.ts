/**
 * The one statement that writes a batch of transitions of different tasks: like transition-write's
 * statement, with every value an array over the batch, so its shape (and its prepared plan) never
 * depends on the batch. Pure query building, no I/O.
 */
import type { TaskEvent } from "@ratatoskr/contracts";
import type { Task } from "../../generated/client.ts";
import { prismaLikeTypes } from "../sql/sql-pool.ts";
import type { TransitionPlan } from "./transition-plan.ts";
import type { TaskPatch } from "./transition-types.ts";

/** One transition of the batch, planned on `row` at `now`. */
export interface PlannedWrite {
  row: Task;
  event: TaskEvent;
  plan: TransitionPlan;
  patch: TaskPatch;
}

/** Patch fields and their columns. A patch travels as one jsonb object per task, keyed by column. */
const PATCH_COLUMNS: Record<Exclude<keyof TaskPatch, "finishedAt">, string> = {
  title: "title",
  goal: "goal",
  repos: "repos",
  why: "why",
  acceptanceCriteria: "acceptance_criteria",
  branch: "branch",
  prUrl: "pr_url",
  agentSessionId: "agent_session_id",
  agentServerUrl: "agent_server_url",
  failureReason: "failure_reason",
  statusCommentId: "status_comment_id",
  resultText: "result_text",
  locale: "locale",
};

const ARRAY_COLUMNS = new Set(["repos", "acceptance_criteria"]);

function patchSet(column: string): string {
  const has = `i.patch ? '${column}'`;
  if (ARRAY_COLUMNS.has(column))
    return `${column} = CASE WHEN ${has} THEN ARRAY(SELECT jsonb_array_elements_text(i.patch->'${column}')) ELSE tasks.${column} END`;
  const cast = column === "status_comment_id" ? "::bigint" : "";
  return `${column} = CASE WHEN ${has} THEN (i.patch->>'${column}')${cast} ELSE tasks.${column} END`;
}

/**
 * Only rows still at the version and `updated_at` they were planned from are updated; the event,
 * notifications and outbox rows of a task are written only if its row was. A row another
 * transaction holds locked is skipped, not waited for: the batch never waits on one task, and two
 * batches never deadlock. Returns each written task row with its outbox rows in
 * `follow_ups_json`; a task missing from the result lost a race or was locked.
 */
const WRITE_BATCH = `
WITH i AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::int[], $4::int[], $5::int[], $6::bool[], $7::bool[],
    $8::int[], $9::int[], $10::int[], $11::timestamp[], $12::float8[], $13::text[], $14::int[],
    $15::timestamp[], $16::text[], $17::jsonb[], $18::text[], $19::jsonb[])
    AS i(id, status, version, turn_count, pending_turns, analysing, skip_requested, round, max_turns,
      max_rounds, finished_at, budget_usd, paused_step, was_version, was_updated_at, event_type,
      payload, from_status, patch)
), l AS (
  SELECT tasks.id FROM tasks JOIN i ON i.id = tasks.id
  WHERE tasks.version = i.was_version AND tasks.updated_at = i.was_updated_at
  FOR UPDATE OF tasks SKIP LOCKED
), t AS (
  UPDATE tasks SET status = i.status, version = i.version, turn_count = i.turn_count,
    pending_turns = i.pending_turns, analysing = i.analysing, skip_requested = i.skip_requested,
    round = i.round, max_turns = i.max_turns, max_rounds = i.max_rounds, finished_at = i.finished_at,
    updated_at = $20::timestamp, budget_usd = i.budget_usd, paused_step = i.paused_step,
    ${Object.values(PATCH_COLUMNS).map(patchSet).join(",\n    ")}
  FROM i WHERE tasks.id = i.id AND tasks.id IN (SELECT id FROM l)
  RETURNING tasks.*
), e AS (
  INSERT INTO task_events (task_id, version, type, payload, from_status, to_status, created_at)
  SELECT t.id, t.version, i.event_type, i.payload, i.from_status, t.status, $20::timestamp
  FROM t JOIN i ON i.id = t.id
), n AS (
  SELECT u.task_id, u.ord, nextval(pg_get_serial_sequence('notifications', 'id'))::int AS id,
    u.channel, u.chat_id, u.template, u.params
  FROM unnest($21::int[], $22::int[], $23::text[], $24::bigint[], $25::text[], $26::jsonb[])
    AS u(task_id, ord, channel, chat_id, template, params)
  WHERE u.task_id IN (SELECT id FROM t)
), ni AS (
  INSERT INTO notifications (id, task_id, channel, chat_id, thread_id, template, params, created_at)
  SELECT n.id, n.task_id, n.channel, n.chat_id, CASE WHEN n.channel = 'telegram' THEN t.thread_id END, n.template,
    n.params, $20::timestamp FROM n JOIN t ON t.id = n.task_id
), f AS (
  INSERT INTO follow_ups (task_id, queue, job_id, data, created_at)
  SELECT fu.task_id, fu.queue, fu.job_id,
    CASE WHEN n.id IS NULL THEN fu.data ELSE fu.data || jsonb_build_object('notificationId', n.id) END,
    $20::timestamp
  FROM unnest($27::int[], $28::text[], $29::text[], $30::jsonb[], $31::int[]) WITH ORDINALITY
    AS fu(task_id, queue, job_id, data, nord, ford)
  LEFT JOIN n ON n.task_id = fu.task_id AND n.ord = fu.nord
  WHERE fu.task_id IN (SELECT id FROM t)
  ORDER BY fu.ford
  RETURNING id, task_id, queue, job_id, data, created_at, dispatched_at
)
SELECT t.*,
  (SELECT coalesce(json_agg(f ORDER BY f.id), '[]'::json) FROM f WHERE f.task_id = t.id) AS follow_ups_json
FROM t`;

function sqlValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  return value;
}

function patchJson(patch: TaskPatch): string {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(PATCH_COLUMNS)) {
    const value = patch[key as keyof TaskPatch];
    if (value !== undefined) out[column] = sqlValue(value);
  }
  return JSON.stringify(out);
}

export function writeBatchQuery(writes: readonly PlannedWrite[], now: Date) {
  const col = <T>(f: (w: PlannedWrite) => T) => writes.map(f);
  const notices = writes.flatMap((w) =>
    w.plan.notifications.map((n, ord) => ({ id: w.row.id, n, ord: ord + 1 })),
  );
  const followUps = writes.flatMap((w) => w.plan.followUps.map((f) => ({ id: w.row.id, f })));
  const values: unknown[] = [
    col((w) => w.row.id),
    col((w) => w.plan.columns.status),
    col((w) => w.plan.columns.version),
    col((w) => w.plan.columns.turnCount),
    col((w) => w.plan.columns.pendingTurns),
    col((w) => w.plan.columns.analysing),
    col((w) => w.plan.columns.skipRequested),
    col((w) => w.plan.columns.round),
    col((w) => w.plan.columns.maxTurns),
    col((w) => w.plan.columns.maxRounds),
    col((w) => sqlValue(w.patch.finishedAt !== undefined ? w.patch.finishedAt : w.plan.columns.finishedAt)),
    col((w) => w.plan.columns.budgetUsd ?? null),
    col((w) => w.plan.columns.pausedStep ?? null),
    col((w) => w.row.version),
    col((w) => sqlValue(w.row.updatedAt)),
    col((w) => w.event.type),
    col((w) => JSON.stringify(w.event)),
    col((w) => w.row.status),
    col((w) => patchJson(w.patch)),
    now.toISOString(),
    notices.map((x) => x.id),
    notices.map((x) => x.ord),
    notices.map((x) => x.n.channel),
    notices.map((x) => sqlValue(x.n.chatId)),
    notices.map((x) => x.n.template),
    notices.map((x) => JSON.stringify(x.n.params)),
    followUps.map((x) => x.id),
    followUps.map((x) => x.f.queue),
    followUps.map((x) => x.f.jobId),
    followUps.map((x) => JSON.stringify(x.f.data)),
    followUps.map((x) => (x.f.notification === undefined ? null : x.f.notification + 1)),
  ];
  // Named: each connection plans the one shape once.
  return { name: "rt-transition-batch", text: WRITE_BATCH, values, types: prismaLikeTypes };
}
