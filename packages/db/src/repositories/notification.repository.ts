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

  /** sending → pending when nothing went out (e.g. 429 before any part was sent), so a retry may claim it. */
  release(id: number, error: string): Promise<boolean> {
    return this.settle(id, ["sending"], { status: "pending", error });
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
