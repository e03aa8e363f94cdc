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

const HEAD = `
SELECT h.id, h.status,
  EXISTS (SELECT 1 FROM tasks b WHERE b.target_key = $1 AND b.status = ANY($3::text[]) AND b.command_kind = ANY($2::text[])) AS busy
FROM (SELECT id, status FROM tasks WHERE target_key = $1 AND status = ANY($4::text[]) AND command_kind = ANY($2::text[])
  ORDER BY id LIMIT 1) h`;

const WAITING = `
SELECT id, version, pos::int FROM (
  SELECT id, version, row_number() OVER (ORDER BY id) AS pos FROM tasks
  WHERE target_key = $1 AND status = 'queued' AND command_kind = ANY($2::text[])
) w WHERE $3::int IS NULL OR id >= $3::int ORDER BY id`;

/** The command whose turn it is, if one may start now: the line's oldest is queued and nothing runs or is paused there. */
export async function startableHead(pool: Database["pool"], targetKey: string): Promise<number | undefined> {
  const { rows } = await pool.query<{ id: number; status: string; busy: boolean }>({
    name: "rt-gitea-line-head",
    text: HEAD,
    values: [targetKey, WORK_COMMANDS, HOLDING, IN_LINE],
  });
  const head = rows[0];
  return head && head.status === "queued" && !head.busy ? head.id : undefined;
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
