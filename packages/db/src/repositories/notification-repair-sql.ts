/**
 * The statements of the notifier's repairs (a send in doubt, the stale sweeps). The writes are
 * each one conditional statement: what was observed
 * (a claim: `sending` with its attempt count) is checked in the same statement that settles it,
 * so a send that finishes between a look and the write is never overwritten. Postgres re-checks
 * the WHERE clause on the newest row version when it had to wait for a concurrent writer.
 */
const NOW = `(now() AT TIME ZONE 'UTC')`;

/**
 * $1 id, $2 the claim's attempts, $3 resend once (must-deliver), $4 error, $5 parts sent (text[]
 * or null to keep them). Back to pending when it may be resent and never was; else `uncertain`.
 */
export const MARK_UNCERTAIN = `UPDATE notifications SET
    status = CASE WHEN $3::boolean AND uncertain_at IS NULL THEN 'pending' ELSE 'uncertain' END,
    uncertain_at = COALESCE(uncertain_at, ${NOW}),
    error = $4::text,
    sent_message_ids = COALESCE($5::text[]::bigint[], sent_message_ids)
  WHERE id = $1::int AND status = 'sending' AND attempts = $2::int
  RETURNING status`;

/**
 * $1 claimed at least this long ago (ms, by the database's clock, which wrote `claimed_at`), $2
 * droppable templates, $3 error. A must-deliver Telegram message never resent goes back to
 * pending (sent once more, marked); anything else is `uncertain`.
 */
export const SETTLE_STALE_SENDING = `UPDATE notifications SET
    status = CASE WHEN channel = 'telegram' AND uncertain_at IS NULL AND NOT (template = ANY($2::text[]))
      THEN 'pending' ELSE 'uncertain' END,
    uncertain_at = COALESCE(uncertain_at, ${NOW}),
    error = $3::text
  WHERE status = 'sending' AND claimed_at < ${NOW} - $1::int * interval '1 millisecond'
  RETURNING id, status, chat_id::text`;

/** $1 stored before (UTC text), $2 limit: unsettled Telegram messages whose job may be missing. */
export const LIST_STALE_PENDING = `SELECT id, chat_id::text FROM notifications
  WHERE status IN ('pending', 'sending') AND channel = 'telegram' AND chat_id IS NOT NULL AND created_at < $1::timestamp
  ORDER BY id LIMIT $2::int`;
