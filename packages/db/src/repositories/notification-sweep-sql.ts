import type pg from "pg";

/**
 * The notifier's periodic idle sweeps in plain SQL on the pg pool: through Prisma they would load
 * its query compiler into an idle process (~10 MB of RSS). JS instants go in as UTC text cast to
 * `timestamp`, as Prisma writes them; the left-behind search uses database time, as before.
 */
const NOW = `(now() AT TIME ZONE 'UTC')`;
/** $1: claimed before (ms ago), $2: stored before (ms ago), $3: limit. */
export const LIST_CHATS_LEFT_BEHIND = `
  (SELECT DISTINCT chat_id FROM notifications
    WHERE status = 'sending' AND channel = 'telegram' AND chat_id IS NOT NULL
      AND claimed_at < ${NOW} - $1::int * interval '1 millisecond')
  UNION
  (SELECT c.chat_id FROM
    (SELECT DISTINCT chat_id FROM notifications
      WHERE status = 'pending' AND attempts = 0 AND channel = 'telegram' AND chat_id IS NOT NULL
        AND created_at < ${NOW} - $2::int * interval '1 millisecond') c
    CROSS JOIN LATERAL (SELECT status, attempts, created_at FROM notifications h
      WHERE h.channel = 'telegram' AND h.chat_id = c.chat_id AND h.status IN ('pending', 'sending')
      ORDER BY h.id LIMIT 1) head
    WHERE head.status = 'pending' AND head.attempts = 0
      AND head.created_at < ${NOW} - $2::int * interval '1 millisecond')
  ORDER BY chat_id LIMIT $3`;

/** $1: templates, $2: stored before (ms ago), $3: limit. */
const LIST_TASKS_WITH_PENDING_GITEA = `
  SELECT DISTINCT task_id FROM notifications
    WHERE channel = 'gitea' AND status = 'pending' AND task_id IS NOT NULL AND template = ANY($1::text[])
      AND created_at < ${NOW} - $2::int * interval '1 millisecond'
  ORDER BY task_id LIMIT $3`;

export class NotificationSweepSql {
  constructor(private readonly pool: pg.Pool) {}

  async listChatsLeftBehind(claimedBeforeMs: number, pendingBeforeMs: number, limit: number): Promise<number[]> {
    const { rows } = await this.pool.query<{ chat_id: string }>({
      name: "rt-notifications-left-behind",
      text: LIST_CHATS_LEFT_BEHIND,
      values: [claimedBeforeMs, pendingBeforeMs, limit],
    });
    return rows.map((row) => Number(row.chat_id));
  }

  async listTasksWithPendingGitea(templates: readonly string[], storedBeforeMs: number, limit: number): Promise<number[]> {
    const { rows } = await this.pool.query<{ task_id: number }>({
      name: "rt-notifications-gitea-pending",
      text: LIST_TASKS_WITH_PENDING_GITEA,
      values: [templates, storedBeforeMs, limit],
    });
    return rows.map((row) => Number(row.task_id));
  }
}
