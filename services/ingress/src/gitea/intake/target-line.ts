import { GITEA_STATUSES, isFinal } from "@ratatoskr/contracts";
import type { Database } from "@ratatoskr/db";
import { WORK_COMMANDS } from "@ratatoskr/gitea";

/**
 * An issue/PR's line, read in Postgres so that a command joining a long line costs the same as
 * one joining a short one: the line is the work commands not yet final, oldest first. Reading the
 * whole line into the process for each command that arrived made a burst on one issue quadratic.
 */

const IN_LINE = GITEA_STATUSES.filter((status) => !isFinal(status));
/** A command paused by its budget still holds its line: the next one waits for continue or stop. */
const HOLDING = ["running", "paused"];

// A cancel behind the head not answered yet may be meant for it: the head waits for it (G7).
const HEAD = `
SELECT h.id, h.status,
  EXISTS (SELECT 1 FROM tasks b WHERE b.source = 'gitea' AND b.status = ANY($3::text[]) AND b.target_key = $1
    AND b.command_kind = ANY($2::text[])) AS busy,
  EXISTS (SELECT 1 FROM tasks c WHERE c.source = 'gitea' AND c.status = 'received' AND c.target_key = $1
    AND c.id > h.id AND c.command_kind = 'cancel') AS held
FROM (SELECT id, status FROM tasks WHERE target_key = $1 AND status = ANY($4::text[]) AND command_kind = ANY($2::text[])
  ORDER BY id LIMIT 1) h`;

// Positions are counted, not numbered by a window over the line: a command that joined reads
// itself and those behind it, plus one count of those ahead (the index's range, nothing else).
const WAITING = `
SELECT w.id, w.version, (
  SELECT count(*) FROM tasks a WHERE a.source = 'gitea' AND a.status = 'queued' AND a.target_key = $1
    AND a.command_kind = ANY($2::text[]) AND a.id < w0.from_id
)::int + row_number() OVER (ORDER BY w.id)::int AS pos
FROM (SELECT coalesce($3::int, 0) AS from_id) w0
JOIN tasks w ON w.source = 'gitea' AND w.status = 'queued' AND w.target_key = $1
  AND w.command_kind = ANY($2::text[]) AND w.id >= w0.from_id
ORDER BY w.id`;

// The issues/PRs with a waiting command, oldest first: one index probe per line (a loose scan of
// source, status, target_key, id) rather than a pass over every waiting command.
const WAITING_LINES = `
WITH RECURSIVE lines AS (
  (SELECT target_key, id FROM tasks WHERE source = 'gitea' AND status = 'queued' AND target_key IS NOT NULL
    ORDER BY target_key, id LIMIT 1)
  UNION ALL
  SELECT n.target_key, n.id FROM lines l CROSS JOIN LATERAL (
    SELECT target_key, id FROM tasks WHERE source = 'gitea' AND status = 'queued' AND target_key > l.target_key
    ORDER BY target_key, id LIMIT 1) n
)
SELECT target_key FROM lines ORDER BY id LIMIT $1::int`;

/**
 * The command whose turn it is, if one may start now: the line's oldest is queued, nothing runs or
 * is paused there, and no `/agent cancel` posted after it waits to be answered.
 */
export async function startableHead(pool: Database["pool"], targetKey: string): Promise<number | undefined> {
  const { rows } = await pool.query<{ id: number; status: string; busy: boolean; held: boolean }>({
    name: "rt-gitea-line-head",
    text: HEAD,
    values: [targetKey, WORK_COMMANDS, HOLDING, IN_LINE],
  });
  const head = rows[0];
  return head && head.status === "queued" && !head.busy && !head.held ? head.id : undefined;
}

/** A waiting command and its place in the line (1 = next to start). */
export interface WaitingPlace {
  id: number;
  version: number;
  pos: number;
}

/** The waiting commands with their places: all of them, or only `fromId` and those behind it. */
export async function waitingPlaces(pool: Database["pool"], targetKey: string, fromId?: number): Promise<WaitingPlace[]> {
  const { rows } = await pool.query<WaitingPlace>({
    name: "rt-gitea-line-waiting",
    text: WAITING,
    values: [targetKey, WORK_COMMANDS, fromId ?? null],
  });
  return rows;
}

/** The issues/PRs where a command waits, in the order their oldest waiting command arrived (at most `limit`). */
export async function waitingLines(pool: Database["pool"], limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ target_key: string }>({ name: "rt-gitea-waiting-lines", text: WAITING_LINES, values: [limit] });
  return rows.map((r) => r.target_key);
}

/** Gitea commands running now, over every issue/PR (GITEA_MAX_RUNNING caps it). */
export async function runningCommands(pool: Database["pool"]): Promise<number> {
  const { rows } = await pool.query<{ n: number }>({
    name: "rt-gitea-running",
    text: "SELECT count(*)::int AS n FROM tasks WHERE source = 'gitea' AND status = 'running'",
  });
  return rows[0]?.n ?? 0;
}

/** Whether no command of the issue/PR has changed (joined, started, ended …) since `since`. */
export async function lineStillSince(pool: Database["pool"], targetKey: string, since: Date): Promise<boolean> {
  const { rows } = await pool.query<{ still: boolean }>({
    name: "rt-gitea-line-still",
    text: "SELECT coalesce(max(updated_at) < $2::timestamp, true) AS still FROM tasks WHERE target_key = $1",
    values: [targetKey, since.toISOString()],
  });
  return rows[0]?.still ?? true;
}
