import type pg from "pg";
import type { DbClient } from "../database.ts";

export interface IncomingUpdate {
  updateId: number;
  /** The chat the update belongs to, when it names one. */
  chatId: number | null;
  /** The update's JSON as received. */
  payload: string;
}

export interface ClaimedUpdate {
  updateId: number;
  chatId: number | null;
  payload: string;
  /** Earlier attempts that ended in an outage. */
  attempts: number;
}

interface ClaimedRow {
  update_id: bigint;
  chat_id: bigint | null;
  payload: string;
  attempts: number;
}

const toClaimed = (row: ClaimedRow): ClaimedUpdate => ({
  updateId: Number(row.update_id),
  chatId: row.chat_id === null ? null : Number(row.chat_id),
  payload: row.payload,
  attempts: row.attempts,
});

const ACCEPT_SQL = `
  INSERT INTO telegram_updates (update_id, chat_id, payload)
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[])
  ON CONFLICT (update_id) DO NOTHING`;

/** Where pending updates wait: a chat, or one update without a chat. */
export type InboxKey = { chatId: number } | { updateId: number };

/**
 * The Telegram inbox (X6): an update id is taken once, whatever is redelivered or replayed; the
 * updates of a chat are handed out one at a time, oldest first, to one holder at a time.
 */
export class TelegramUpdateRepository {
  /** `pool`: the pg pool under the client, for the webhook's hot path (see sql-pool.ts). */
  constructor(
    private readonly db: DbClient,
    private readonly pool?: pg.Pool,
  ) {}

  /** Stores the updates not seen before, in one statement; returns how many were new. */
  async accept(updates: readonly IncomingUpdate[]): Promise<number> {
    if (updates.length === 0) return 0;
    const ids = updates.map((u) => String(u.updateId));
    const chats = updates.map((u) => (u.chatId === null ? null : String(u.chatId)));
    const payloads = updates.map((u) => u.payload);
    if (this.pool) {
      const result = await this.pool.query(ACCEPT_SQL, [ids, chats, payloads]);
      return result.rowCount ?? 0;
    }
    return this.db.$executeRaw`
      INSERT INTO telegram_updates (update_id, chat_id, payload)
      SELECT * FROM unnest(${ids}::bigint[], ${chats}::bigint[], ${payloads}::text[])
      ON CONFLICT (update_id) DO NOTHING`;
  }

  /**
   * Takes the oldest pending update of `key` for `leaseMs`, or nothing when there is none or the
   * oldest is held (by another replica, or waiting out a retry delay): a chat's updates never
   * overtake each other.
   */
  async claimNext(key: InboxKey, leaseMs: number): Promise<ClaimedUpdate | null> {
    const rows =
      "chatId" in key
        ? await this.db.$queryRaw<ClaimedRow[]>`
          UPDATE telegram_updates SET locked_until = now() + ${leaseMs} * interval '1 millisecond'
          WHERE update_id = (
            SELECT update_id FROM telegram_updates
            WHERE status = 'pending' AND chat_id = ${BigInt(key.chatId)}
            ORDER BY update_id LIMIT 1)
          AND (locked_until IS NULL OR locked_until < now())
          RETURNING update_id, chat_id, payload, attempts`
        : await this.db.$queryRaw<ClaimedRow[]>`
          UPDATE telegram_updates SET locked_until = now() + ${leaseMs} * interval '1 millisecond'
          WHERE update_id = ${BigInt(key.updateId)} AND status = 'pending'
          AND (locked_until IS NULL OR locked_until < now())
          RETURNING update_id, chat_id, payload, attempts`;
    const row = rows[0];
    return row ? toClaimed(row) : null;
  }

  /** Holds a claimed update `leaseMs` longer (its handling is still under way). */
  async extendLease(updateId: number, leaseMs: number): Promise<void> {
    await this.db.$executeRaw`
      UPDATE telegram_updates SET locked_until = now() + ${leaseMs} * interval '1 millisecond'
      WHERE update_id = ${BigInt(updateId)} AND status = 'pending'`;
  }

  async markDone(updateId: number): Promise<void> {
    await this.db.$executeRaw`
      UPDATE telegram_updates SET status = 'done', handled_at = now(), locked_until = NULL, error = NULL
      WHERE update_id = ${BigInt(updateId)}`;
  }

  /** An update that will fail the same way every time: kept for the record, never retried. */
  async markPoison(updateId: number, error: string): Promise<void> {
    await this.db.$executeRaw`
      UPDATE telegram_updates SET status = 'poison', handled_at = now(), locked_until = NULL,
        error = ${error.slice(0, 1_000)}
      WHERE update_id = ${BigInt(updateId)}`;
  }

  /** An outage stopped it: it stays pending, held until `retryInMs` from now. */
  async postpone(updateId: number, retryInMs: number, error: string): Promise<void> {
    await this.db.$executeRaw`
      UPDATE telegram_updates SET attempts = attempts + 1, error = ${error.slice(0, 1_000)},
        locked_until = now() + ${retryInMs} * interval '1 millisecond'
      WHERE update_id = ${BigInt(updateId)}`;
  }

  /** Chats (and chat-less updates) with a pending update nobody holds: what a sweep picks up. */
  async ready(limit = 500): Promise<InboxKey[]> {
    const rows = await this.db.$queryRaw<Array<{ chat_id: bigint | null; update_id: bigint }>>`
      SELECT DISTINCT ON (chat_id) chat_id, update_id FROM telegram_updates
      WHERE status = 'pending' AND (locked_until IS NULL OR locked_until < now())
      ORDER BY chat_id, update_id
      LIMIT ${limit}`;
    const chatless = await this.db.$queryRaw<Array<{ update_id: bigint }>>`
      SELECT update_id FROM telegram_updates
      WHERE status = 'pending' AND chat_id IS NULL AND (locked_until IS NULL OR locked_until < now())
      ORDER BY update_id LIMIT ${limit}`;
    return [
      ...rows.filter((r) => r.chat_id !== null).map((r) => ({ chatId: Number(r.chat_id) })),
      ...chatless.map((r) => ({ updateId: Number(r.update_id) })),
    ];
  }

  /** How many updates still wait to be handled (tests, readiness of a drain). */
  async pendingCount(): Promise<number> {
    const [row] = await this.db.$queryRaw<Array<{ n: bigint }>>`
      SELECT count(*) AS n FROM telegram_updates WHERE status = 'pending'`;
    return Number(row?.n ?? 0);
  }
}
