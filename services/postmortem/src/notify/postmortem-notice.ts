import { jobRequest, notificationJobId, QUEUE, type JobRequest, type NotifyJob, type QueueName } from "@ratatoskr/contracts";
import { channelOf, deliveryJobData, type Prisma, type Repositories, type Task } from "@ratatoskr/db";
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
 * the handler or the sweep), and with `atVersion` only while the task is at that version. The row
 * is the promise: if the enqueue is lost (Redis away), the notifier's sweep of stale pending rows
 * sends it later. Null when nothing was stored.
 */
export async function sendNotice(
  deps: NoticeDeps,
  task: Pick<Task, "id" | "source" | "chatId" | "threadId">,
  notice: PostmortemNotice,
  unlessSentSince: Date,
  atVersion?: number,
): Promise<number | null> {
  const channel = channelOf(task);
  const row = await deps.repos.notifications.createUnlessSince(
    {
      taskId: task.id,
      ...channel,
      template: notice.template,
      params: notice.params as unknown as Prisma.InputJsonObject,
    },
    POSTMORTEM_TEMPLATES,
    unlessSentSince,
    atVersion,
  );
  if (!row) return null;
  const request = jobRequest(QUEUE.notify, deliveryJobData(channel, task.id, row.id) as NotifyJob, notificationJobId(row.id));
  try {
    await deps.enqueue(request);
  } catch (err) {
    deps.logger.warn({ err, notificationId: row.id, template: notice.template }, "postmortem message stored but not queued");
  }
  return row.id;
}
