import type { DbClient } from "../database.ts";

export interface NewDelivery {
  /** Gitea's `X-Gitea-Delivery`. */
  deliveryId: string;
  /** The comment the event is about; a redelivery carries the same one under a new delivery id. */
  commentId?: number | bigint | null;
  event: string;
  outcome: string;
  taskId?: number | null;
}

export type DeliveryVerdict =
  { status: "accepted" } | { status: "duplicate"; by: "delivery-id" | "comment-id" };

/** Webhook idempotency (G1). */
export class WebhookDeliveryRepository {
  constructor(private readonly db: DbClient) {}

  /**
   * Records a delivery unless its delivery id or comment id was seen. Uses ON CONFLICT DO
   * NOTHING rather than catching a unique violation, so it is safe inside a transaction
   * (a failed statement would abort it) — e.g. together with creating the command's task.
   */
  async record(delivery: NewDelivery): Promise<DeliveryVerdict> {
    const { count } = await this.db.webhookDelivery.createMany({
      data: [
        {
          deliveryId: delivery.deliveryId,
          commentId: delivery.commentId ?? null,
          event: delivery.event,
          outcome: delivery.outcome,
          taskId: delivery.taskId ?? null,
        },
      ],
      skipDuplicates: true,
    });
    if (count === 1) return { status: "accepted" };
    const sameDelivery = await this.db.webhookDelivery.findUnique({
      where: { deliveryId: delivery.deliveryId },
    });
    return { status: "duplicate", by: sameDelivery ? "delivery-id" : "comment-id" };
  }

  /** Links an accepted delivery to the task it created, or records what became of it. */
  async update(deliveryId: string, changes: { outcome?: string; taskId?: number | null }): Promise<void> {
    await this.db.webhookDelivery.update({ where: { deliveryId }, data: changes });
  }
}
