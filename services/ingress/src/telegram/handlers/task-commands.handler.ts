import type { TelegramStatus } from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import { parseTaskNumber } from "../parsing/command-parser.ts";
import type { BotDeps, MessageInput } from "./bot-deps.ts";
import { findChatTask, replyWithStatus } from "./chat-task.ts";
import { applyOrExplain } from "./refusal-replies.ts";
import { reply } from "./reply.ts";
import { attachTarget } from "./task-status.params.ts";

type TaskCommand = "retry" | "status" | "continue" | "attach";

/** Resolves `N` to a task of this chat, replying (and returning null) when it cannot. */
async function taskFromArgs(
  deps: BotDeps,
  msg: MessageInput,
  command: TaskCommand,
  args: string,
): Promise<Task | null> {
  const parsed = parseTaskNumber(args);
  if (!parsed.ok) {
    await reply(deps, { chatId: msg.chatId, taskId: null }, "bot.task-number-needed", {
      command,
      given: parsed.given,
    });
    return null;
  }
  const task = await findChatTask(deps, msg.chatId, parsed.taskId);
  if (!task)
    await reply(deps, { chatId: msg.chatId, taskId: null }, "task.not-found", { taskId: parsed.taskId });
  return task;
}

/** `/retry N`: re-opens the dialogue or re-runs a failed/timed-out task. */
export async function handleRetry(deps: BotDeps, msg: MessageInput, args: string): Promise<void> {
  const task = await taskFromArgs(deps, msg, "retry", args);
  if (task) await applyOrExplain(deps, msg.chatId, task, { type: "user.retried" });
}

/** `/continue N`: resumes the saved dev session of a failed or timed-out task. */
export async function handleContinue(deps: BotDeps, msg: MessageInput, args: string): Promise<void> {
  const task = await taskFromArgs(deps, msg, "continue", args);
  if (task) await applyOrExplain(deps, msg.chatId, task, { type: "user.continued" });
}

/** `/status N`: status, title, repositories, round and the latest agent runs. */
export async function handleTaskStatus(deps: BotDeps, msg: MessageInput, args: string): Promise<void> {
  const task = await taskFromArgs(deps, msg, "status", args);
  if (task) await replyWithStatus(deps, msg.chatId, task.id);
}

/** `/attach N`: the opencode command that opens the live agent session, if there is one. */
export async function handleAttach(deps: BotDeps, msg: MessageInput, args: string): Promise<void> {
  const task = await taskFromArgs(deps, msg, "attach", args);
  if (!task) return;
  const target = attachTarget(task, await deps.repos.traces.list(task.id));
  const to = { chatId: msg.chatId, taskId: task.id };
  if (!target) {
    return reply(deps, to, "bot.attach-none", { taskId: task.id, status: task.status as TelegramStatus });
  }
  await reply(deps, to, "bot.attach", { taskId: task.id, ...target });
}
