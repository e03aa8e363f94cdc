import { jobRequest, notificationJobId, QUEUE, type JobRequest, type QueueName } from "@ratatoskr/contracts";
import type { Prisma, Repositories, Task } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";

export const POSTMORTEM_TEMPLATES = ["task.postmortem", "task.postmortem-unavailable"] as const;

export type PostmortemNotice =
  | { template: "task.postmortem"; params: { taskId: number; cause: "failed" | "timeout"; why: string; whatToDo: string } }
  | { template: "task.postmortem-unavailable"; params: { taskId: number } };

export interface NoticeDeps {
  repos: Pick<Repositories, "notifications">;
  enqueue: (request: JobRequest<QueueName>) => Promise<unknown>;
  logger: Logger;
}

/**
 * Stores the message for the task's owner and queues its delivery. The row is the promise: if
 * the enqueue is lost (Redis away), the notifier's sweep of stale pending rows sends it later.
 */
export async function sendNotice(deps: NoticeDeps, task: Pick<Task, "id" | "source" | "chatId">, notice: PostmortemNotice): Promise<number> {
  const telegram = task.source !== "gitea";
  const row = await deps.repos.notifications.create({
    taskId: task.id,
    channel: telegram ? "telegram" : "gitea",
    chatId: telegram ? task.chatId : null,
    template: notice.template,
    params: notice.params as unknown as Prisma.InputJsonObject,
  });
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
