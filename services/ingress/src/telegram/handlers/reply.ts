import { jobRequest, notificationJobId, QUEUE } from "@ratatoskr/contracts";
import type { Prisma } from "@ratatoskr/db";
import type { TemplateId, TemplateParams } from "@ratatoskr/notifier";
import type { BotDeps } from "./bot-deps.ts";

export interface ReplyTarget {
  chatId: number;
  /** The forum topic; the one the handled update came from when not given. */
  threadId?: number | null;
  /** The task the reply is about, if any (links it in the notifications table). */
  taskId: number | null;
}

/** Deterministic, so a repeated enqueue of the same reply is a no-op. */
export const replyJobId = notificationJobId;

/**
 * A reply is a stored notification plus its notify job; the notifier renders it in the chat's
 * order. Ingress never sends messages itself. Params are typed by the notifier's catalogue, so a
 * reply with a missing or misspelled parameter does not compile.
 */
export async function reply<K extends TemplateId>(
  deps: Pick<BotDeps, "repos" | "enqueue" | "logger" | "threadId">,
  to: ReplyTarget,
  template: K,
  params: TemplateParams[K],
): Promise<void> {
  const notification = await deps.repos.notifications.create({
    taskId: to.taskId,
    channel: "telegram",
    chatId: to.chatId,
    threadId: to.threadId ?? deps.threadId ?? null,
    template,
    params: params as unknown as Prisma.InputJsonObject,
  });
  const data = { v: 1 as const, kind: "message" as const, notificationId: notification.id, chatId: to.chatId };
  try {
    await deps.enqueue(jobRequest(QUEUE.notify, data, replyJobId(notification.id)));
  } catch (err) {
    // The row stays `pending`; failing the update here would re-run the whole command.
    deps.logger.warn(
      { err, notificationId: notification.id, taskId: to.taskId, template },
      "reply stored but not queued",
    );
  }
}
