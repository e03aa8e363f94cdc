import type pg from "pg";
import type { Notification } from "../../generated/client.ts";
import { createGroupCommit } from "../sql/group-commit.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";

/** What `claimNextForChat` found at the head of a chat's unsettled messages. */
export interface ChatHead {
  /** The oldest unsettled message; `sending` when not claimed now (its sender died), else claimed. */
  head: Notification | null;
  /** The head went pending → sending in this statement. */
  claimed: boolean;
  /** Another unsettled message follows the head. */
  more: boolean;
}

/**
 * The notifier's per-message statements in plain SQL on the pg pool under Prisma (read, claim,
 * record the result): each is one prepared statement instead of a trip through Prisma's query
 * compiler. Rows come back exactly as Prisma's would.
 */
const NOW = `(now() AT TIME ZONE 'UTC')`;

const FIND = "SELECT * FROM notifications WHERE id = $1";
const LIST_UNSETTLED = `SELECT * FROM notifications
  WHERE channel = 'telegram' AND chat_id = $1 AND status IN ('pending', 'sending') AND id > $2
  ORDER BY id LIMIT $3`;
/**
 * For each chat given, its oldest unsettled message, claimed in the same statement when it is
 * pending (a `sending` one is returned as it is: a sender died with it), and whether another one
 * follows; a chat with none has no row. Concurrent drains' claims go together in one statement
 * and one commit. The claim stays guarded by the status, so a stale head can cost a skipped
 * claim, never two.
 */
const CLAIM_NEXT = `WITH first AS (
    SELECT min(h.id) AS id, count(*) > 1 AS more
    FROM unnest($1::bigint[]) AS r(chat_id)
    CROSS JOIN LATERAL (
      SELECT id FROM notifications
      WHERE channel = 'telegram' AND chat_id = r.chat_id AND status IN ('pending', 'sending')
      ORDER BY id LIMIT 2) h
    GROUP BY r.chat_id),
  claimed AS (
    UPDATE notifications n SET status = 'sending', attempts = n.attempts + 1, claimed_at = ${NOW}
    FROM first f WHERE n.id = f.id AND n.status = 'pending' RETURNING n.*)
  SELECT c.*, true AS is_claimed, f.more AS has_more FROM claimed c JOIN first f ON f.id = c.id
  UNION ALL
  SELECT n.*, false, f.more FROM first f JOIN notifications n ON n.id = f.id
    WHERE NOT EXISTS (SELECT 1 FROM claimed c WHERE c.id = f.id)`;
const CLAIM = `UPDATE notifications SET status = 'sending', attempts = attempts + 1, claimed_at = ${NOW}
  WHERE id = $1 AND status = 'pending' RETURNING *`;
/** Many sends' results at once: ids, and each one's Telegram message ids joined by commas. */
const MARK_SENT = `UPDATE notifications n
  SET status = 'sent', sent_message_ids = string_to_array(v.ids, ',')::bigint[], sent_at = ${NOW}, error = NULL
  FROM unnest($1::int[], $2::text[]) AS v(id, ids)
  WHERE n.id = v.id AND n.status = 'sending'
  RETURNING n.id`;

function toNotification(row: Record<string, unknown>): Notification {
  const notification = camelRow<Notification>(row);
  // bigint[] arrives as strings (the int8 parser covers scalars only).
  notification.sentMessageIds = ((row.sent_message_ids as unknown[] | null) ?? []).map((id) => BigInt(id as string));
  return notification;
}

export class NotificationSql {
  constructor(private readonly pool: pg.Pool) {}

  private async rows(name: string, text: string, values: unknown[]): Promise<Notification[]> {
    const result = await this.pool.query({ name, text, values, types: prismaLikeTypes });
    return result.rows.map((row: Record<string, unknown>) => toNotification(row));
  }

  async findById(id: number): Promise<Notification | null> {
    return (await this.rows("rt-notification-find", FIND, [id]))[0] ?? null;
  }

  listUnsettledForChat(chatId: number | bigint, afterId: number, limit: number): Promise<Notification[]> {
    return this.rows("rt-notification-unsettled", LIST_UNSETTLED, [String(chatId), afterId, limit]);
  }

  /** Claims that arrive while two are in flight go together in the next statement (group commit). */
  private readonly claimNextGrouped = createGroupCommit<bigint, ChatHead>({
    write: async (chatIds) => {
      const result = await this.pool.query({
        name: "rt-notification-claim-next-many",
        text: CLAIM_NEXT,
        values: [chatIds.map(String)],
        types: prismaLikeTypes,
      });
      const heads = new Map<bigint, ChatHead>();
      for (const { is_claimed: claimed, has_more: more, ...fields } of result.rows as Array<Record<string, unknown>>) {
        const head = toNotification(fields);
        heads.set(head.chatId!, { head, claimed: claimed === true, more: more === true });
      }
      return chatIds.map((chatId) => Promise.resolve(heads.get(chatId) ?? { head: null, claimed: false, more: false }));
    },
    keyOf: (chatId) => chatId,
    maxBatch: 100,
    maxInFlight: 2,
  });

  claimNextForChat(chatId: number | bigint): Promise<ChatHead> {
    return this.claimNextGrouped(BigInt(chatId));
  }

  async claim(id: number): Promise<Notification | null> {
    return (await this.rows("rt-notification-claim", CLAIM, [id]))[0] ?? null;
  }

  /**
   * Sends that finish while a mark is being written are recorded together in the next statement
   * (group commit): alone a mark goes at once, under load one round trip carries many.
   */
  private readonly markSentGrouped = createGroupCommit<{ id: number; ids: string }, boolean>({
    write: async (marks) => {
      const result = await this.pool.query({
        name: "rt-notification-sent-many",
        text: MARK_SENT,
        values: [marks.map((m) => m.id), marks.map((m) => m.ids)],
      });
      const marked = new Set((result.rows as Array<{ id: number }>).map((row) => row.id));
      return marks.map((m) => Promise.resolve(marked.has(m.id)));
    },
    maxBatch: 100,
    maxInFlight: 2,
  });

  markSent(id: number, sentMessageIds: readonly (number | bigint)[]): Promise<boolean> {
    return this.markSentGrouped({ id, ids: sentMessageIds.map(String).join(",") });
  }
}
