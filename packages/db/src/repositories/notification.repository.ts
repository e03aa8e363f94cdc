import type { Notification, Prisma } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

export type NotificationStatus = "pending" | "sending" | "sent" | "failed" | "dropped";

export interface NewNotification {
  taskId?: number | null;
  channel: "telegram" | "gitea";
  chatId?: number | bigint | null;
  template: string;
  params: Prisma.InputJsonObject;
  replyMarkup?: Prisma.InputJsonValue | null;
}

/**
 * Outgoing messages. A message is claimed (pending → sending) before it is sent and never
 * claimed again, so it goes out at most once even if the notifier dies mid-send.
 */
export class NotificationRepository {
  constructor(private readonly db: DbClient) {}

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
    return this.db.notification.findUnique({ where: { id } });
  }

  /** Atomically pending → sending; null when another notifier has it or it was already handled. */
  async claim(id: number): Promise<Notification | null> {
    const [claimed] = await this.db.notification.updateManyAndReturn({
      where: { id, status: "pending" },
      data: { status: "sending", attempts: { increment: 1 }, claimedAt: new Date() },
    });
    return claimed ?? null;
  }

  /** sending → sent, with the ids of the messages it became (a long text is split). */
  markSent(id: number, sentMessageIds: readonly (number | bigint)[]): Promise<boolean> {
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
   * A Telegram chat's messages still waiting, oldest first, up to and including `upToId`. The
   * notifier sends a chat's messages in this order, so a later one never overtakes an earlier one.
   */
  listPendingForChat(chatId: number | bigint, upToId: number, limit = 50): Promise<Notification[]> {
    return this.db.notification.findMany({
      where: { channel: "telegram", chatId, status: "pending", id: { lte: upToId } },
      orderBy: { id: "asc" },
      take: limit,
    });
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
   * Ids of messages still `pending` well after they were stored: their notify job was never
   * queued (Redis was away when the producer tried), so the notifier queues them itself.
   */
  async listStalePending(olderThanMs: number, limit = 100): Promise<number[]> {
    const rows = await this.db.notification.findMany({
      where: { status: "pending", channel: "telegram", createdAt: { lt: new Date(Date.now() - olderThanMs) } },
      orderBy: { id: "asc" },
      take: limit,
      select: { id: true },
    });
    return rows.map((row) => row.id);
  }

  /**
   * Messages left in `sending` by a notifier that stopped: whether they went out is unknown,
   * and resending could duplicate them, so they become `failed` for a person to look at.
   */
  async failStaleSending(olderThanMs: number): Promise<number> {
    const { count } = await this.db.notification.updateMany({
      where: { status: "sending", claimedAt: { lt: new Date(Date.now() - olderThanMs) } },
      data: { status: "failed", error: "notifier stopped mid-send; delivery unknown" },
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
