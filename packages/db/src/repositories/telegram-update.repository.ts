import type pg from "pg";
import type { DbClient } from "../database.ts";

export interface IncomingUpdate {
  updateId: number;
  /** The chat the update belongs to, when it names one. */
  chatId: number | null;
  /** The update's JSON as received. */
  payload: string;
  /** Set for an update refused at the door (nested too deep…): stored as poison, never handled. */
  poison?: string;
}

export interface ClaimedUpdate {
  updateId: number;
  chatId: number | null;
  payload: string;
  /** Earlier attempts that ended in an outage. */
  attempts: number;
}

interface ClaimedRow {
  update_id: bigint | string;
  chat_id: bigint | string | null;
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
  INSERT INTO telegram_updates (update_id, chat_id, payload, status, error, handled_at)
  SELECT u, c, p, CASE WHEN e IS NULL THEN 'pending' ELSE 'poison' END, e, CASE WHEN e IS NULL THEN NULL ELSE now() END
  FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS i(u, c, p, e)
  ON CONFLICT (update_id) DO NOTHING`;

const CLAIM_COLUMNS = "RETURNING update_id, chat_id, payload, attempts";
const LEASE = "locked_until = now() + $2::int * interval '1 millisecond'";
const FREE = "(locked_until IS NULL OR locked_until < now())";

const CLAIM_CHAT_SQL = `
  UPDATE telegram_updates SET ${LEASE}
  WHERE update_id = (
    SELECT update_id FROM telegram_updates WHERE status = 'pending' AND chat_id = $1::bigint
    ORDER BY update_id LIMIT 1)
  AND ${FREE} ${CLAIM_COLUMNS}`;

const CLAIM_ONE_SQL = `
  UPDATE telegram_updates SET ${LEASE}
  WHERE update_id = $1::bigint AND status = 'pending' AND ${FREE} ${CLAIM_COLUMNS}`;

const MARK_DONE_SQL =
  "UPDATE telegram_updates SET status = 'done', handled_at = now(), locked_until = NULL, error = NULL";

/**
 * Marks $1 handled and takes the oldest pending update of each chat in $2 unless it is held. The
 * claim sees the chats as they were before this statement, so the finished ones are excluded by id.
 */
const FINISH_AND_CLAIM_CHATS_SQL = `
  WITH finished AS (${MARK_DONE_SQL} WHERE update_id = ANY($1::bigint[]))
  UPDATE telegram_updates SET locked_until = now() + $3::int * interval '1 millisecond'
  WHERE update_id IN (
    SELECT DISTINCT ON (chat_id) update_id FROM telegram_updates
    WHERE status = 'pending' AND chat_id = ANY($2::bigint[]) AND update_id <> ALL($1::bigint[])
    ORDER BY chat_id, update_id)
  AND ${FREE} ${CLAIM_COLUMNS}`;

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
    const poison = updates.map((u) => u.poison?.slice(0, 1_000) ?? null);
    if (this.pool) {
      const result = await this.pool.query({
        name: "rt-tg-accept",
        text: ACCEPT_SQL,
        values: [ids, chats, payloads, poison],
      });
      return result.rowCount ?? 0;
    }
    return this.db.$executeRawUnsafe(ACCEPT_SQL, ids, chats, payloads, poison);
  }

  /** Plain SQL on the pg pool when there is one (no Prisma on the inbox's hot path), else Prisma. */
  private async query<R>(sql: string, params: unknown[], name?: string): Promise<R[]> {
    if (this.pool) return (await this.pool.query({ name, text: sql, values: params })).rows as R[];
    return this.db.$queryRawUnsafe<R[]>(sql, ...params);
  }

  /**
   * Takes the oldest pending update of `key` for `leaseMs`, or nothing when there is none or the
   * oldest is held (by another replica, or waiting out a retry delay): a chat's updates never
   * overtake each other.
   */
  async claimNext(key: InboxKey, leaseMs: number): Promise<ClaimedUpdate | null> {
    const rows =
      "chatId" in key
        ? await this.query<ClaimedRow>(CLAIM_CHAT_SQL, [String(key.chatId), leaseMs], "rt-tg-claim-chat")
        : await this.query<ClaimedRow>(CLAIM_ONE_SQL, [String(key.updateId), leaseMs]);
    const row = rows[0];
    return row ? toClaimed(row) : null;
  }

  /**
   * Marks `finished` handled and takes the oldest pending update of each chat in `chatIds` (none
   * for a chat whose oldest is held): one statement for many chats, so working off many chats
   * costs one round trip per round, not two per update. The claim takes no chat's update twice.
   */
  async finishAndClaimChats(
    finished: readonly number[],
    chatIds: readonly number[],
    leaseMs: number,
  ): Promise<ClaimedUpdate[]> {
    const rows = await this.query<ClaimedRow>(
      FINISH_AND_CLAIM_CHATS_SQL,
      [finished.map(String), chatIds.map(String), leaseMs],
      "rt-tg-finish-claim-chats",
    );
    return rows.map(toClaimed);
  }

  /** Holds a claimed update `leaseMs` longer (its handling is still under way). */
  async extendLease(updateId: number, leaseMs: number): Promise<void> {
    await this.query(
      `UPDATE telegram_updates SET locked_until = now() + $2::int * interval '1 millisecond'
       WHERE update_id = $1::bigint AND status = 'pending'`,
      [String(updateId), leaseMs],
    );
  }

  async markDone(updateId: number): Promise<void> {
    await this.query(`${MARK_DONE_SQL} WHERE update_id = $1::bigint`, [String(updateId)]);
  }

  /** An update that will fail the same way every time: kept for the record, never retried. */
  async markPoison(updateId: number, error: string): Promise<void> {
    await this.query(
      `UPDATE telegram_updates SET status = 'poison', handled_at = now(), locked_until = NULL, error = $2
       WHERE update_id = $1::bigint`,
      [String(updateId), error.slice(0, 1_000)],
    );
  }

  /** An outage stopped it: it stays pending, held until `retryInMs` from now. */
  async postpone(updateId: number, retryInMs: number, error: string): Promise<void> {
    await this.query(
      `UPDATE telegram_updates SET attempts = attempts + 1, error = $3,
         locked_until = now() + $2::int * interval '1 millisecond'
       WHERE update_id = $1::bigint`,
      [String(updateId), retryInMs, error.slice(0, 1_000)],
    );
  }

  /** Chats (and chat-less updates) with a pending update nobody holds: what a sweep picks up. */
  async ready(limit = 500): Promise<InboxKey[]> {
    const rows = await this.query<{ chat_id: bigint | string | null }>(
      `SELECT DISTINCT ON (chat_id) chat_id FROM telegram_updates
       WHERE status = 'pending' AND chat_id IS NOT NULL AND ${FREE}
       ORDER BY chat_id, update_id LIMIT $1::int`,
      [limit],
      "rt-tg-ready-chats",
    );
    const chatless = await this.query<{ update_id: bigint | string }>(
      `SELECT update_id FROM telegram_updates
       WHERE status = 'pending' AND chat_id IS NULL AND ${FREE}
       ORDER BY update_id LIMIT $1::int`,
      [limit],
      "rt-tg-ready-chatless",
    );
    return [
      ...rows.map((r) => ({ chatId: Number(r.chat_id) })),
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
