import type { Notification, Prisma, PrismaClient } from "../../generated/client.ts";
import type pg from "pg";
import type { DbClient } from "../database.ts";
import { NotificationSql, type ChatHead } from "./notification-sql.ts";
import { LIST_STALE_PENDING, MARK_UNCERTAIN, SETTLE_STALE_SENDING } from "./notification-repair-sql.ts";
import { LIST_CHATS_LEFT_BEHIND, NotificationSweepSql } from "./notification-sweep-sql.ts";

export type { ChatHead } from "./notification-sql.ts";

export type NotificationStatus = "pending" | "sending" | "sent" | "failed" | "dropped" | "uncertain";

/** Where a message stands, without its content. */
export interface NotificationState {
  id: number;
  status: NotificationStatus;
  chatId: number | null;
}

/** What the stale-sending sweep settled: the messages it put back to be resent, and how many became uncertain. */
export interface StaleSendingSettled {
  resend: Array<{ id: number; chatId: number }>;
  uncertain: number;
}

/** What became of a send that may or may not have reached the chat. */
export type UncertainOutcome = "resend" | "uncertain";

export interface NewNotification {
  taskId?: number | null;
  channel: "telegram" | "gitea";
  chatId?: number | bigint | null;
  /** The chat's forum topic to send into (message_thread_id); none: the chat, or its General topic. */
  threadId?: number | null;
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
    private readonly pool?: pg.Pool,
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
        threadId: rest.threadId ?? null,
        ...(replyMarkup ? { replyMarkup } : {}),
      },
    });
  }

  /**
   * `create`, unless the task already has a message with one of `templates` stored at or after
   * `since`: the check and the insert run under the task's row lock, so two writers (a handler and
   * a sweep's repair) cannot both add one. With `atVersion`, only while the task is still at that
   * version: a repair writes only on what it saw (no transition since, so no newer failure and no
   * newer follow-up). Null when nothing was written.
   *
   * The lock comes first, in a statement of its own: the check after it reads what the writer that
   * held the lock committed (one INSERT … WHERE NOT EXISTS would read from before it waited).
   */
  async createUnlessSince(
    input: NewNotification & { taskId: number },
    templates: readonly string[],
    since: Date,
    atVersion?: number,
  ): Promise<Notification | null> {
    const write = async (tx: DbClient) => {
      const locked =
        atVersion === undefined
          ? await tx.$queryRaw<{ id: number }[]>`SELECT id FROM tasks WHERE id = ${input.taskId} FOR UPDATE`
          : await tx.$queryRaw<{ id: number }[]>`SELECT id FROM tasks WHERE id = ${input.taskId} AND version = ${atVersion} FOR UPDATE`;
      if (locked.length === 0) return null;
      const repo = new NotificationRepository(tx);
      if (await repo.findForTaskSince(input.taskId, templates, since)) return null;
      return repo.create(input);
    };
    // A client already in a transaction has no $transaction of its own.
    return "$transaction" in this.db ? (this.db as unknown as PrismaClient).$transaction(write) : write(this.db);
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

  /** Status and chat of each of `ids` that exists (one statement): what a job checks of messages it did not send itself. */
  async findStates(ids: readonly number[]): Promise<NotificationState[]> {
    if (ids.length === 0) return [];
    const rows = await this.query<{ id: number; status: NotificationStatus; chat_id: string | null }>(
      "rt-notification-states",
      "SELECT id, status, chat_id::text FROM notifications WHERE id = ANY($1::int[])",
      [[...ids]],
    );
    return rows.map((row) => ({ id: row.id, status: row.status, chatId: row.chat_id === null ? null : Number(row.chat_id) }));
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
   * A send that may have reached the chat (timeout, reset after the request went out, a sender
   * that died mid-send) is settled in one conditional write, and only while the row is still the
   * claim that was observed (`sending`, with the same attempt count: a send that finished, or a
   * newer claim, is left alone). With `resendOnce` and no earlier doubt it goes back to pending,
   * marked so it is sent once more as "(resent)"; otherwise it settles as `uncertain`, never
   * resent. `sentMessageIds`: the parts of a long text that certainly went out (a resend resumes
   * after them). Null when the row is no longer that claim.
   */
  async markUncertain(
    claim: Pick<Notification, "id" | "attempts">,
    error: string,
    resendOnce: boolean,
    sentMessageIds?: readonly (number | bigint)[],
  ): Promise<UncertainOutcome | null> {
    const parts = sentMessageIds ? sentMessageIds.map(String) : null;
    const rows = await this.query<{ status: string }>("rt-notification-uncertain", MARK_UNCERTAIN, [
      claim.id,
      claim.attempts,
      resendOnce,
      error,
      parts,
    ]);
    const status = rows[0]?.status;
    if (status === undefined) return null;
    return status === "pending" ? "resend" : "uncertain";
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
   * Messages still unsettled (pending, or left `sending`) well after they were stored, with their
   * chats: their notify job was never queued or was lost with Redis, so the notifier queues them itself.
   */
  async listStalePending(olderThanMs: number, limit = 100): Promise<Array<{ id: number; chatId: number }>> {
    const storedBefore = new Date(Date.now() - olderThanMs).toISOString();
    const rows = await this.query<{ id: number; chat_id: string }>("rt-notifications-stale-pending", LIST_STALE_PENDING, [
      storedBefore,
      limit,
    ]);
    return rows.map((row) => ({ id: row.id, chatId: Number(row.chat_id) }));
  }

  /**
   * Telegram chats that may have been left behind by a notifier that died, found without waiting
   * for any job: a message claimed (`sending`) at least `claimedBeforeMs` ago, or, at the head of
   * the chat's queue, a message stored at least `pendingBeforeMs` ago and never tried (a head
   * that was tried waits out its job's backoff or a 429). Either may also be a chat a live
   * notifier is sending to (or about to): only the chat's lease tells them apart.
   */
  /**
   * Gitea tasks with a notification of one of `templates` stored at least `storedBeforeMs` ago and
   * still pending (its job may have been lost with Redis), found without waiting for any job.
   */
  async listTasksWithPendingGitea(templates: readonly string[], storedBeforeMs: number, limit = 100): Promise<number[]> {
    if (this.sweepSql) return this.sweepSql.listTasksWithPendingGitea(templates, storedBeforeMs, limit);
    const rows = await this.db.notification.findMany({
      where: {
        channel: "gitea",
        template: { in: [...templates] },
        status: "pending",
        createdAt: { lt: new Date(Date.now() - storedBeforeMs) },
        taskId: { not: null },
      },
      select: { taskId: true },
      distinct: ["taskId"],
      orderBy: { taskId: "asc" },
      take: limit,
    });
    return rows.map((row) => row.taskId!);
  }

  async listChatsLeftBehind(
    { claimedBeforeMs, pendingBeforeMs }: { claimedBeforeMs: number; pendingBeforeMs: number },
    limit = 100,
  ): Promise<number[]> {
    if (this.sweepSql) return this.sweepSql.listChatsLeftBehind(claimedBeforeMs, pendingBeforeMs, limit);
    // The same statement through Prisma (database time, as the rows' own stamps).
    const rows = await this.db.$queryRawUnsafe<Array<{ chat_id: bigint }>>(
      LIST_CHATS_LEFT_BEHIND,
      claimedBeforeMs,
      pendingBeforeMs,
      limit,
    );
    return rows.map((row) => Number(row.chat_id));
  }

  /**
   * Last resort for messages left in `sending` long ago that no drain settled (a chat's drain
   * settles them first): whether they went out is unknown. One conditional write, so a send that
   * finishes while it runs is left as that send recorded it: a must-deliver Telegram message not
   * resent before goes back to pending, to be sent once more marked "(resent)" (its notify job
   * is queued again by the unqueued-pending sweep); the rest — the `droppable` templates, one
   * already resent, a Gitea row — become `uncertain`.
   */
  async settleStaleSending(
    olderThanMs: number,
    droppable: readonly string[],
  ): Promise<StaleSendingSettled> {
    const rows = await this.query<{ id: number; status: string; chat_id: string | null }>(
      "rt-notifications-settle-stale",
      SETTLE_STALE_SENDING,
      [Math.round(olderThanMs), [...droppable], "notifier stopped mid-send; delivery unknown"],
    );
    const resend = rows
      .filter((row) => row.status === "pending")
      .map((row) => ({ id: row.id, chatId: Number(row.chat_id) }));
    return { resend, uncertain: rows.length - resend.length };
  }

  /** One statement on the pg pool when there is one (no trip through Prisma's compiler), else through Prisma. */
  private async query<R>(name: string, text: string, values: unknown[]): Promise<R[]> {
    if (this.pool) return (await this.pool.query({ name, text, values })).rows as R[];
    return this.db.$queryRawUnsafe<R[]>(text, ...values);
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
