import { Prisma, type Notification } from "../../generated/client.ts";
import type pg from "pg";
import type { DbClient } from "../database.ts";
import { NotificationSql, type ChatHead } from "./notification-sql.ts";
import { NotificationSweepSql } from "./notification-sweep-sql.ts";

export type { ChatHead } from "./notification-sql.ts";

export type NotificationStatus = "pending" | "sending" | "sent" | "failed" | "dropped" | "uncertain";

/** What became of a send that may or may not have reached the chat. */
export type UncertainOutcome = "resend" | "uncertain";

export interface NewNotification {
  taskId?: number | null;
  channel: "telegram" | "gitea";
  chatId?: number | bigint | null;
  template: string;
  params: Prisma.InputJsonObject;
  replyMarkup?: Prisma.InputJsonValue | null;
}

/**
 * Outgoing messages. A message is claimed (pending → sending) before its request goes out: that
 * row is the send record. A `sending` row whose sender is gone, or a send that ended in a timeout
 * or reset, may have reached the chat; it is never blindly resent (see `markUncertain`).
 */
export class NotificationRepository {
  private readonly sql: NotificationSql | undefined;
  private readonly sweepSql: NotificationSweepSql | undefined;

  /** `pool`: the pg pool under the client, for the notifier's per-message statements. */
  constructor(
    private readonly db: DbClient,
    pool?: pg.Pool,
  ) {
    this.sql = pool ? new NotificationSql(pool) : undefined;
    this.sweepSql = pool ? new NotificationSweepSql(pool) : undefined;
  }

  /** A message outside any transition (a refusal, a `/status` reply); the caller enqueues its notify job. */
  create(input: NewNotification): Promise<Notification> {
    const { replyMarkup, ...rest } = input;
    return this.db.notification.create({
      data: {
        ...rest,
        taskId: rest.taskId ?? null,
        chatId: rest.chatId ?? null,
        ...(replyMarkup ? { replyMarkup } : {}),
      },
    });
  }

  /**
   * The task's first message with one of `templates` stored at or after `since` (database time),
   * e.g. whether the postmortem of a failure was already sent.
   */
  findForTaskSince(taskId: number, templates: readonly string[], since: Date): Promise<Notification | null> {
    return this.db.notification.findFirst({
      where: { taskId, template: { in: [...templates] }, createdAt: { gte: since } },
      orderBy: { id: "asc" },
    });
  }

  findById(id: number): Promise<Notification | null> {
    if (this.sql) return this.sql.findById(id);
    return this.db.notification.findUnique({ where: { id } });
  }

  /** Atomically pending → sending; null when another notifier has it or it was already handled. */
  async claim(id: number): Promise<Notification | null> {
    if (this.sql) return this.sql.claim(id);
    const [claimed] = await this.db.notification.updateManyAndReturn({
      where: { id, status: "pending" },
      data: { status: "sending", attempts: { increment: 1 }, claimedAt: new Date() },
    });
    return claimed ?? null;
  }

  /** sending → sent, with the ids of the messages it became (a long text is split). */
  markSent(id: number, sentMessageIds: readonly (number | bigint)[]): Promise<boolean> {
    if (this.sql) return this.sql.markSent(id, sentMessageIds);
    return this.settle(id, ["sending"], {
      status: "sent",
      sentMessageIds: sentMessageIds.map(BigInt),
      sentAt: new Date(),
      error: null,
    });
  }

  /**
   * sending → pending when the send stopped at a known point (e.g. a 429), so a retry may claim
   * it. `sentMessageIds` are the parts of a long text that did go out: the retry skips them.
   */
  release(id: number, error: string, sentMessageIds?: readonly (number | bigint)[]): Promise<boolean> {
    return this.settle(id, ["sending"], {
      status: "pending",
      error,
      ...(sentMessageIds ? { sentMessageIds: sentMessageIds.map(BigInt) } : {}),
    });
  }

  /**
   * Claims the oldest unsettled message of a Telegram chat if it is pending, in one round trip,
   * and says whether another follows: what the holder of the chat's lease does before each send.
   * A `sending` head is returned unclaimed (a sender died with it: settle it first).
   */
  async claimNextForChat(chatId: number | bigint): Promise<ChatHead> {
    if (this.sql) return this.sql.claimNextForChat(chatId);
    const [first, second] = await this.listUnsettledForChat(chatId, 0, 2);
    if (!first) return { head: null, claimed: false, more: false };
    const claimed = first.status === "pending" ? await this.claim(first.id) : null;
    return { head: claimed ?? first, claimed: claimed !== null, more: second !== undefined };
  }

  /**
   * A Telegram chat's unsettled messages (pending, or `sending` from a sender that may have died)
   * with ids above `afterId`, oldest first. The notifier sends a chat's messages in this order,
   * so a later one never overtakes an earlier one.
   */
  listUnsettledForChat(chatId: number | bigint, afterId: number, limit = 50): Promise<Notification[]> {
    if (this.sql) return this.sql.listUnsettledForChat(chatId, afterId, limit);
    return this.db.notification.findMany({
      where: { channel: "telegram", chatId, status: { in: ["pending", "sending"] }, id: { gt: afterId } },
      orderBy: { id: "asc" },
      take: limit,
    });
  }

  /**
   * A `sending` message may have reached the chat (timeout, reset after the request went out, a
   * sender that died mid-send). With `resendOnce` and no earlier doubt it goes back to pending,
   * marked so it is sent once more as "(resent)"; otherwise it settles as `uncertain`, never
   * resent. `sentMessageIds`: the parts of a long text that certainly went out (a resend resumes
   * after them). Null when it was not `sending` (someone else settled it).
   */
  async markUncertain(
    id: number,
    error: string,
    resendOnce: boolean,
    sentMessageIds?: readonly (number | bigint)[],
  ): Promise<UncertainOutcome | null> {
    const now = new Date();
    const parts = sentMessageIds ? { sentMessageIds: sentMessageIds.map(BigInt) } : {};
    if (resendOnce) {
      const { count } = await this.db.notification.updateMany({
        where: { id, status: "sending", uncertainAt: null },
        data: { status: "pending", uncertainAt: now, error, ...parts },
      });
      if (count === 1) return "resend";
    }
    const { count } = await this.db.notification.updateMany({
      where: { id, status: "sending" },
      data: { status: "uncertain", error, ...parts },
    });
    if (count === 0) return null;
    await this.db.notification.updateMany({ where: { id, uncertainAt: null }, data: { uncertainAt: now } });
    return "uncertain";
  }

  /** Permanent failure: never retried. */
  markFailed(id: number, error: string): Promise<boolean> {
    return this.settle(id, ["pending", "sending"], { status: "failed", error });
  }

  /** Deliberately not sent (e.g. the chat blocked the bot, or the message went stale). */
  markDropped(id: number, reason: string): Promise<boolean> {
    return this.settle(id, ["pending", "sending"], { status: "dropped", error: reason });
  }

  /**
   * Ids of messages still unsettled (pending, or left `sending`) well after they were stored:
   * their notify job was never queued or was lost with Redis, so the notifier queues them itself.
   */
  async listStalePending(olderThanMs: number, limit = 100): Promise<number[]> {
    if (this.sweepSql) return this.sweepSql.listStalePending(new Date(Date.now() - olderThanMs), limit);
    const rows = await this.db.notification.findMany({
      where: {
        status: { in: ["pending", "sending"] },
        channel: "telegram",
        createdAt: { lt: new Date(Date.now() - olderThanMs) },
      },
      orderBy: { id: "asc" },
      take: limit,
      select: { id: true },
    });
    return rows.map((row) => row.id);
  }

  /**
   * Telegram chats that may have been left behind by a notifier that died, found without waiting
   * for any job: a message claimed (`sending`) at least `claimedBeforeMs` ago, or, at the head of
   * the chat's queue, a message stored at least `pendingBeforeMs` ago and never tried (a head
   * that was tried waits out its job's backoff or a 429). Either may also be a chat a live
   * notifier is sending to (or about to): only the chat's lease tells them apart.
   */
  async listChatsLeftBehind(
    { claimedBeforeMs, pendingBeforeMs }: { claimedBeforeMs: number; pendingBeforeMs: number },
    limit = 100,
  ): Promise<number[]> {
    if (this.sweepSql) return this.sweepSql.listChatsLeftBehind(claimedBeforeMs, pendingBeforeMs, limit);
    // Database time, as the rows' own stamps.
    const now = Prisma.sql`(now() AT TIME ZONE 'UTC')`;
    const claimedBefore = Prisma.sql`${now} - ${claimedBeforeMs}::int * interval '1 millisecond'`;
    const storedBefore = Prisma.sql`${now} - ${pendingBeforeMs}::int * interval '1 millisecond'`;
    const rows = await this.db.$queryRaw<Array<{ chat_id: bigint }>>`
      (SELECT DISTINCT chat_id FROM notifications
        WHERE status = 'sending' AND channel = 'telegram' AND chat_id IS NOT NULL AND claimed_at < ${claimedBefore})
      UNION
      (SELECT c.chat_id FROM
        (SELECT DISTINCT chat_id FROM notifications
          WHERE status = 'pending' AND attempts = 0 AND channel = 'telegram' AND chat_id IS NOT NULL
            AND created_at < ${storedBefore}) c
        CROSS JOIN LATERAL (SELECT status, attempts, created_at FROM notifications h
          WHERE h.channel = 'telegram' AND h.chat_id = c.chat_id AND h.status IN ('pending', 'sending')
          ORDER BY h.id LIMIT 1) head
        WHERE head.status = 'pending' AND head.attempts = 0 AND head.created_at < ${storedBefore})
      ORDER BY chat_id LIMIT ${limit}`;
    return rows.map((row) => Number(row.chat_id));
  }

  /**
   * Last resort for messages left in `sending` long ago that no drain settled (a chat's drain
   * settles them first): whether they went out is unknown, and resending could duplicate them,
   * so they become `uncertain`.
   */
  async settleStaleSending(olderThanMs: number): Promise<number> {
    const claimedBefore = new Date(Date.now() - olderThanMs);
    const error = "notifier stopped mid-send; delivery unknown";
    if (this.sweepSql) return this.sweepSql.settleStaleSending(claimedBefore, error);
    const { count } = await this.db.notification.updateMany({
      where: { status: "sending", claimedAt: { lt: claimedBefore } },
      data: { status: "uncertain", uncertainAt: new Date(), error },
    });
    return count;
  }

  private async settle(
    id: number,
    from: NotificationStatus[],
    data: Prisma.NotificationUpdateManyMutationInput,
  ): Promise<boolean> {
    const { count } = await this.db.notification.updateMany({ where: { id, status: { in: from } }, data });
    return count === 1;
  }
}
