import { followUpJobId, jobRequest, QUEUE, type AnyJobRequest, type TaskEffect } from "@ratatoskr/contracts";
import type { Prisma, Task } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

type Notify = Extract<TaskEffect, { type: "notify" }>;

/**
 * Job id of the n-th (0-based) notify effect of a transition: `<taskId>-notify-<version>`,
 * then `<taskId>-notify-2-<version>`, … so several notices of one step stay distinct and stable.
 */
export function notifyJobId(task: Pick<Task, "id" | "version">, index: number): string {
  return followUpJobId(task.id, index === 0 ? "notify" : `notify-${index + 1}`, task.version);
}

/**
 * A notify effect becomes a stored message plus the job that delivers it. Telegram messages
 * go to the task's chat; a Gitea notice means "bring the status comment up to date".
 */
async function notifyJob(tx: DbClient, task: Task, effect: Notify, index: number): Promise<AnyJobRequest> {
  const channel = task.source === "gitea" ? "gitea" : "telegram";
  const notification = await tx.notification.create({
    data: {
      taskId: task.id,
      channel,
      chatId: channel === "telegram" ? task.chatId : null,
      template: effect.template,
      params: effect.params,
    },
  });
  const data =
    channel === "telegram"
      ? { v: 1 as const, kind: "message" as const, notificationId: notification.id }
      : { v: 1 as const, kind: "gitea-status" as const, taskId: task.id };
  return jobRequest(QUEUE.notify, data, notifyJobId(task, index));
}

/** Outbox rows for a transition's effects, in effect order. */
export async function effectRows(
  tx: DbClient,
  task: Task,
  effects: TaskEffect[],
): Promise<Prisma.FollowUpCreateManyInput[]> {
  const rows: Prisma.FollowUpCreateManyInput[] = [];
  let notifyIndex = 0;
  for (const effect of effects) {
    const job = effect.type === "enqueue" ? effect.job : await notifyJob(tx, task, effect, notifyIndex++);
    rows.push({ taskId: task.id, queue: job.queue, jobId: job.jobId, data: job.data });
  }
  return rows;
}
