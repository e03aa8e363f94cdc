import { isPoisonSqlError, type Database, type FollowUp } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";

/**
 * Turns stored commands (webhook_deliveries, outcome `pending`) into what intake works on: a task
 * in status `received` with its route-command and status-comment follow-ups, in one statement
 * per batch. Rows are taken oldest first and locked (FOR UPDATE, not SKIP LOCKED): a second
 * process draining at the same time waits for the first and then finds them settled, so task ids
 * follow the order the comments were stored in and no comment makes two tasks. A row whose task
 * already exists (made before this inbox, say) is settled `duplicate`.
 */
const DRAIN = `
WITH pending AS (
  SELECT id, repo_owner, repo_name, comment_id, target_type, target_number, command_kind, command_message,
    requester_login, max_rounds
  FROM webhook_deliveries WHERE outcome = 'pending' AND ($2::int IS NULL OR id = $2::int)
  ORDER BY id LIMIT $1::int FOR UPDATE
), t AS (
  INSERT INTO tasks (source, status, repo_owner, repo_name, target_type, target_number, target_key,
    command_kind, command_message, requester_login, comment_id, max_turns, max_rounds, created_at, updated_at)
  SELECT 'gitea', 'received', p.repo_owner, p.repo_name, p.target_type, p.target_number,
    p.repo_owner || '/' || p.repo_name || '#' || p.target_number, p.command_kind, p.command_message,
    p.requester_login, p.comment_id, 0, p.max_rounds, $3::timestamp, $3::timestamp
  FROM pending p
  WHERE NOT EXISTS (SELECT 1 FROM tasks x
    WHERE x.repo_owner = p.repo_owner AND x.repo_name = p.repo_name AND x.comment_id = p.comment_id)
  ORDER BY p.id
  ON CONFLICT DO NOTHING
  RETURNING id, repo_owner, repo_name, comment_id
), settled AS (
  UPDATE webhook_deliveries w SET outcome = CASE WHEN t.id IS NULL THEN 'duplicate' ELSE 'accepted' END, task_id = t.id
  FROM pending p LEFT JOIN t ON t.repo_owner = p.repo_owner AND t.repo_name = p.repo_name AND t.comment_id = p.comment_id
  WHERE w.id = p.id
  RETURNING w.id
), f AS (
  INSERT INTO follow_ups (task_id, queue, job_id, data, created_at)
  SELECT id, 'intake', id || '-route-0', jsonb_build_object('v', 1, 'kind', 'route-command', 'taskId', id), $3::timestamp FROM t
  UNION ALL
  SELECT id, 'notify', id || '-notify-0', jsonb_build_object('v', 1, 'kind', 'gitea-status', 'taskId', id), $3::timestamp FROM t
  RETURNING id, task_id, queue, job_id, data
)
SELECT 'row' AS kind, f.id, f.task_id AS "taskId", f.queue, f.job_id AS "jobId", f.data FROM f
UNION ALL
SELECT 'settled', count(*)::int, NULL, NULL, NULL, NULL FROM settled
ORDER BY kind DESC, id`;

type Row = Pick<FollowUp, "id" | "taskId" | "queue" | "jobId" | "data"> & { kind: "row" | "settled" };

/**
 * A kick waits this long before it drains, so the commands stored meanwhile go in the same
 * statement and the same dispatch: under load the work after the answers costs a few statements
 * a second instead of one per delivery, and competes less with the next answers. A person never
 * notices 20 ms before the status comment.
 */
const GATHER_MS = 20;

/** Rows per statement: a burst is made into tasks a hundred at a time. */
const BATCH = 100;

const REFUSE = `UPDATE webhook_deliveries SET outcome = 'refused', error = $2 WHERE id = $1 AND outcome = 'pending'`;

export interface DrainResult {
  followUps: FollowUp[];
  /** Stored commands settled (made into tasks, or found to be duplicates). */
  settled: number;
  /** Stored commands Postgres refused to make into tasks (kept as `refused`, never retried). */
  refused: number[];
}

/** One pass over the pending commands: every batch until none is left. */
export async function drainCommands(pool: Database["pool"]): Promise<DrainResult> {
  const result: DrainResult = { followUps: [], settled: 0, refused: [] };
  for (;;) {
    let settled: number;
    try {
      settled = await drainBatch(pool, null, result);
    } catch (error) {
      if (!isPoisonSqlError(error)) throw error;
      settled = await drainOneByOne(pool, result);
    }
    if (settled < BATCH) return result;
  }
}

async function drainBatch(pool: Database["pool"], id: number | null, into: DrainResult): Promise<number> {
  const now = new Date();
  const { rows } = await pool.query<Row>({ name: "rt-gitea-drain", text: DRAIN, values: [BATCH, id, now.toISOString()] });
  let settled = 0;
  for (const { kind, ...row } of rows) {
    if (kind === "settled") settled = row.id;
    else into.followUps.push({ ...row, createdAt: now, dispatchedAt: null });
  }
  into.settled += settled;
  return settled;
}

/**
 * A batch Postgres refused for its data: each pending row alone, so the one at fault is kept as
 * `refused` with the reason and the others become tasks. Returns how many rows it settled.
 */
async function drainOneByOne(pool: Database["pool"], into: DrainResult): Promise<number> {
  const { rows } = await pool.query<{ id: number }>(
    `SELECT id FROM webhook_deliveries WHERE outcome = 'pending' ORDER BY id LIMIT ${BATCH}`,
  );
  for (const { id } of rows) {
    try {
      await drainBatch(pool, id, into);
    } catch (error) {
      if (!isPoisonSqlError(error)) throw error;
      await pool.query(REFUSE, [id, String((error as Error).message ?? error).slice(0, 1_000)]);
      into.refused.push(id);
    }
  }
  return rows.length;
}

export interface CommandInboxOptions {
  pool: Database["pool"];
  /** Hands the new tasks' follow-ups to the queues (the outbox reconciler covers a failure). */
  dispatch(followUps: readonly FollowUp[]): void;
  logger: Pick<Logger, "info" | "warn" | "error">;
}

export interface CommandInbox {
  /** Makes the stored commands into tasks soon, after the answers in flight have been written. */
  kick(): void;
  /** One drain now (the periodic pass after a crash, tests); resolves when it is done. */
  drain(): Promise<DrainResult>;
  /** Waits for a drain in progress (shutdown). */
  idle(): Promise<void>;
}

/**
 * Drains one at a time per process: a kick during a drain runs one more drain after it, so a
 * burst of deliveries costs a few statements, not one per delivery. A failed drain (Postgres
 * away) leaves the rows pending for the periodic pass, whose log tells of it.
 */
export function createCommandInbox(opts: CommandInboxOptions): CommandInbox {
  let running: Promise<DrainResult> | undefined;
  let again = false;
  let scheduled = false;

  function drain(): Promise<DrainResult> {
    if (running) {
      again = true;
      return running;
    }
    running = drainCommands(opts.pool)
      .then((result) => {
        opts.dispatch(result.followUps);
        const taskIds = [...new Set(result.followUps.map((f) => f.taskId))];
        if (taskIds.length > 0) opts.logger.info({ taskIds }, "gitea commands stored as tasks");
        if (result.refused.length > 0)
          opts.logger.error({ deliveries: result.refused }, "stored gitea commands Postgres refused to make into tasks");
        return result;
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          kick();
        }
      });
    return running;
  }

  function kick(): void {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      // The rows stay pending; the periodic pass retries them and tells of the failure.
      drain().catch(() => undefined);
    }, GATHER_MS);
  }

  return {
    kick,
    drain,
    idle: async () => {
      while (running || scheduled)
        await (running ?? new Promise<void>((resolve) => setTimeout(resolve, GATHER_MS))).catch(() => undefined);
    },
  };
}
