import type pg from "pg";

/**
 * The notifier's periodic idle sweeps in plain SQL on the pg pool: through Prisma they would load
 * its query compiler into an idle process (~10 MB of RSS). JS instants go in as UTC text cast to
 * `timestamp`, as Prisma writes them; the left-behind search uses database time, as before.
 */
const LIST_STALE_PENDING = `SELECT id FROM notifications
  WHERE status IN ('pending', 'sending') AND channel = 'telegram' AND created_at < $1::timestamp
  ORDER BY id LIMIT $2`;

const SETTLE_STALE_SENDING = `UPDATE notifications SET status = 'uncertain', uncertain_at = $2::timestamp, error = $3
  WHERE status = 'sending' AND claimed_at < $1::timestamp`;

const NOW = `(now() AT TIME ZONE 'UTC')`;
/** $1: claimed before (ms ago), $2: stored before (ms ago), $3: limit. */
const LIST_CHATS_LEFT_BEHIND = `
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

export class NotificationSweepSql {
  constructor(private readonly pool: pg.Pool) {}

  async listStalePending(storedBefore: Date, limit: number): Promise<number[]> {
    const { rows } = await this.pool.query<{ id: number }>({
      name: "rt-notifications-stale-pending",
      text: LIST_STALE_PENDING,
      values: [storedBefore.toISOString(), limit],
    });
    return rows.map((row) => row.id);
  }

  async settleStaleSending(claimedBefore: Date, error: string): Promise<number> {
    const result = await this.pool.query({
      name: "rt-notifications-settle-stale",
      text: SETTLE_STALE_SENDING,
      values: [claimedBefore.toISOString(), new Date().toISOString(), error],
    });
    return result.rowCount ?? 0;
  }

  async listChatsLeftBehind(claimedBeforeMs: number, pendingBeforeMs: number, limit: number): Promise<number[]> {
    const { rows } = await this.pool.query<{ chat_id: string }>({
      name: "rt-notifications-left-behind",
      text: LIST_CHATS_LEFT_BEHIND,
      values: [claimedBeforeMs, pendingBeforeMs, limit],
    });
    return rows.map((row) => Number(row.chat_id));
  }
}
