import type { Task } from "@ratatoskr/db";
import { readLiveRun } from "@ratatoskr/notifier";
import type { BotDeps } from "./bot-deps.ts";
import { reply } from "./reply.ts";
import { taskStatusParams } from "./task-status.params.ts";

/** Task N as this chat may see it: another chat's task, or a Gitea one, does not exist here. */
export async function findChatTask(
  deps: Pick<BotDeps, "repos">,
  chatId: number,
  taskId: number,
): Promise<Task | null> {
  const task = await deps.repos.tasks.findById(taskId);
  if (!task || task.source !== "telegram" || task.chatId !== BigInt(chatId)) return null;
  return task;
}

/**
 * Replies with the task's current status, title, repositories, branch, round, latest runs and
 * total spend, and while an agent works, its stage, round, last tool and how to attach (O6).
 */
export async function replyWithStatus(
  deps: Pick<BotDeps, "repos" | "queues" | "enqueue" | "logger">,
  chatId: number,
  taskId: number,
): Promise<void> {
  const task = await deps.repos.tasks.findById(taskId);
  if (!task) return reply(deps, { chatId, taskId: null }, "task.not-found", { taskId });
  const [traces, total] = await Promise.all([
    deps.repos.traces.list(taskId),
    deps.repos.traces.tracesSummary(taskId),
  ]);
  const live = await readLiveRun(deps.queues, traces.at(-1));
  await reply(deps, { chatId, taskId }, "task.status", taskStatusParams(task, traces, total, live));
}
