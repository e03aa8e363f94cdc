import type pg from "pg";
import type { Notification } from "../../generated/client.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";

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
const OPEN_CHAT = `(SELECT *, true AS is_target FROM notifications WHERE id = $1)
  UNION ALL
  (SELECT n.*, false FROM notifications n
    WHERE n.channel = 'telegram' AND n.status IN ('pending', 'sending')
      AND n.chat_id = (SELECT chat_id FROM notifications WHERE id = $1)
    ORDER BY n.id LIMIT $2)`;
const CLAIM = `UPDATE notifications SET status = 'sending', attempts = attempts + 1, claimed_at = ${NOW}
  WHERE id = $1 AND status = 'pending' RETURNING *`;
const MARK_SENT = `UPDATE notifications
  SET status = 'sent', sent_message_ids = $2::bigint[], sent_at = ${NOW}, error = NULL
  WHERE id = $1 AND status = 'sending'`;

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

  async openChat(id: number, limit: number): Promise<{ target: Notification | null; page: Notification[] }> {
    const result = await this.pool.query({
      name: "rt-notification-open-chat",
      text: OPEN_CHAT,
      values: [id, limit],
      types: prismaLikeTypes,
    });
    let target: Notification | null = null;
    const page: Notification[] = [];
    for (const row of result.rows as Array<Record<string, unknown>>) {
      const { is_target: isTarget, ...fields } = row;
      if (isTarget) target = toNotification(fields);
      else page.push(toNotification(fields));
    }
    return { target, page };
  }

  async claim(id: number): Promise<Notification | null> {
    return (await this.rows("rt-notification-claim", CLAIM, [id]))[0] ?? null;
  }

  async markSent(id: number, sentMessageIds: readonly (number | bigint)[]): Promise<boolean> {
    const result = await this.pool.query({
      name: "rt-notification-sent",
      text: MARK_SENT,
      values: [id, sentMessageIds.map(String)],
    });
    return result.rowCount === 1;
  }
}
