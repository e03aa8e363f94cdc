import { jobRequest, notificationJobId, QUEUE, type JobRequest, type QueueName } from "@ratatoskr/contracts";
import type { Prisma, Repositories, Task } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";

export const POSTMORTEM_TEMPLATES = ["task.postmortem", "task.postmortem-unavailable"] as const;

export type PostmortemNotice =
  | { template: "task.postmortem"; params: { taskId: number; cause: "failed" | "timeout"; why: string; whatToDo: string } }
  /** `reason`: why no postmortem comes (the agent failed, its worker died), in the person's words. */
  | { template: "task.postmortem-unavailable"; params: { taskId: number; reason?: string } };

export interface NoticeDeps {
  repos: Pick<Repositories, "notifications">;
  enqueue: (request: JobRequest<QueueName>) => Promise<unknown>;
  logger: Logger;
}

/**
 * Stores the message for the task's owner and queues its delivery, unless a postmortem message of
 * the task was stored at or after `unlessSentSince` (one message per failure, whoever writes it:
 * the handler or the sweep). The row is the promise: if the enqueue is lost (Redis away), the
 * notifier's sweep of stale pending rows sends it later. Null when one was already there.
 */
export async function sendNotice(
  deps: NoticeDeps,
  task: Pick<Task, "id" | "source" | "chatId" | "threadId">,
  notice: PostmortemNotice,
  unlessSentSince: Date,
): Promise<number | null> {
  const telegram = task.source !== "gitea";
  const row = await deps.repos.notifications.createUnlessSince(
    {
      taskId: task.id,
      channel: telegram ? "telegram" : "gitea",
      chatId: telegram ? task.chatId : null,
      // The forum topic the task was opened in, like every other message of the task.
      threadId: telegram ? task.threadId : null,
      template: notice.template,
      params: notice.params as unknown as Prisma.InputJsonObject,
    },
    POSTMORTEM_TEMPLATES,
    unlessSentSince,
  );
  if (!row) return null;
  const request = telegram
    ? jobRequest(QUEUE.notify, { v: 1, kind: "message", notificationId: row.id, ...chatOf(task) }, notificationJobId(row.id))
    : jobRequest(QUEUE.notify, { v: 1, kind: "gitea-status", taskId: task.id }, notificationJobId(row.id));
  try {
    await deps.enqueue(request);
  } catch (err) {
    deps.logger.warn({ err, notificationId: row.id, template: notice.template }, "postmortem message stored but not queued");
  }
  return row.id;
}

/** The chat in the job lets the notifier take the chat's lease before reading anything. */
const chatOf = (task: Pick<Task, "chatId">) => (task.chatId === null ? {} : { chatId: Number(task.chatId) });
