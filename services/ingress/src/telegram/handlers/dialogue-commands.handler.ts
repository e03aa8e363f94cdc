import type { Task } from "@ratatoskr/db";
import type { BotDeps, MessageInput } from "./bot-deps.ts";
import { applyOrExplain } from "./refusal-replies.ts";
import { reply } from "./reply.ts";

/**
 * A new draft that becomes the chat's active task. An earlier unfinished task is left as it is
 * (a running one keeps running, a ready draft can still be approved by its button or with
 * /retry N); only free text now goes to the new one.
 */
export async function openTask(deps: BotDeps, msg: MessageInput): Promise<Task> {
  const task = await deps.repos.tasks.createTelegramTask({
    chatId: msg.chatId,
    userId: msg.userId,
    threadId: deps.threadId ?? null,
    maxTurns: deps.limits.maxTurns,
    maxRounds: deps.limits.maxRounds,
    budgetUsd: deps.limits.budgetUsd,
  });
  deps.logger.info({ taskId: task.id, chatId: msg.chatId }, "telegram task opened");
  return task;
}

/** `/start`: a new task and a greeting naming its number. */
export async function handleStart(deps: BotDeps, msg: MessageInput): Promise<void> {
  const task = await openTask(deps, msg);
  await reply(deps, { chatId: msg.chatId, taskId: task.id }, "bot.greeting", { taskId: task.id });
}

/** `/cancel`: cancels the active task; the reducer's notice confirms it. */
export async function handleCancel(deps: BotDeps, msg: MessageInput): Promise<void> {
  const task = await deps.repos.tasks.findActiveByChat(msg.chatId);
  if (!task) return reply(deps, { chatId: msg.chatId, taskId: null }, "bot.nothing-to-cancel", {});
  await applyOrExplain(deps, msg.chatId, task, { type: "user.cancelled" });
}

/** `/skip`: stop the questions, the analyst drafts from what it has. */
export async function handleSkip(deps: BotDeps, msg: MessageInput): Promise<void> {
  const task = await deps.repos.tasks.findActiveByChat(msg.chatId);
  // Nothing to draft: the command list shows how to start one.
  if (!task) return reply(deps, { chatId: msg.chatId, taskId: null }, "bot.help", {});
  await applyOrExplain(deps, msg.chatId, task, { type: "user.skipped" });
}
