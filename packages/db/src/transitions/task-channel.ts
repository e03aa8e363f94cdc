import type { Task } from "../../generated/client.ts";

/**
 * Where a task's person hears about it, decided from its door in this one place: a Telegram task
 * gets each message in its chat (and forum topic); a Gitea command shows its state in one status
 * comment the notifier reconciles, with a reply below it for a postmortem. A new door adds its
 * channel here and its renderer in the notifier; no step knows which channel a task has.
 */
export type TaskChannel =
  | { channel: "telegram"; chatId: bigint | null; threadId: number | null }
  | { channel: "gitea"; chatId: null; threadId: null };

export function channelOf(task: Pick<Task, "source" | "chatId" | "threadId">): TaskChannel {
  return task.source === "gitea"
    ? { channel: "gitea", chatId: null, threadId: null }
    : { channel: "telegram", chatId: task.chatId, threadId: task.threadId };
}

/**
 * What the channel's notify job carries to deliver a stored message of the task: a Telegram
 * message names its chat (the notifier takes the chat's lease before reading anything) and its
 * row when known (a transition's rows get their ids as they are written); a Gitea one has the
 * task's status comment and replies reconciled.
 */
export function deliveryJobData(channel: TaskChannel, taskId: number, notificationId?: number): Record<string, unknown> {
  if (channel.channel === "gitea") return { v: 1, kind: "gitea-status", taskId };
  return {
    v: 1,
    kind: "message",
    ...(notificationId === undefined ? {} : { notificationId }),
    ...(channel.chatId === null ? {} : { chatId: Number(channel.chatId) }),
  };
}
