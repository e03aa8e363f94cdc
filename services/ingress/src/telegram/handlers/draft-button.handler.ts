import {
  extendedBudgetUsd,
  parseCallbackData,
  type CallbackData,
  type TaskEvent,
  type TelegramStatus,
} from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import type { BotDeps } from "./bot-deps.ts";
import { toastText } from "./button-toast.ts";
import { findChatTask, replyWithStatus } from "./chat-task.ts";
import { refusalOf, replyToRefusal } from "./refusal-replies.ts";
import { reply } from "./reply.ts";

export interface ButtonInput {
  chatId: number;
  callbackQueryId: string;
  data: string;
}

const DIALOGUE: ReadonlySet<string> = new Set<TelegramStatus>(["draft", "collecting", "ready"]);
const IN_THE_WORKS: ReadonlySet<string> = new Set<TelegramStatus>(["approved", "running"]);

/** What pressing a button led to: nothing to say, or a toast over the chat. */
type Answer = { toast?: string };

/**
 * Approve / Edit / Cancel under a draft (T7): the same transitions as the typed word, /cancel
 * and an edit, on the task the button belongs to; Continue (+budget) / Stop under a budget stop
 * (P5). Every press is answered exactly once (the spinner stops). A repeated Approve, Continue
 * or Stop gets only a toast, never another chat message or a second effect.
 */
export async function handleDraftButton(deps: BotDeps, button: ButtonInput): Promise<void> {
  let answer: Answer = {};
  try {
    const data = parseCallbackData(button.data);
    const task = data ? await findChatTask(deps, button.chatId, data.taskId) : null;
    if (!data || !task) {
      deps.logger.info({ chatId: button.chatId }, "button of an unknown task or format ignored");
      return;
    }
    answer = await pressed(deps, button.chatId, task, data);
  } finally {
    await deps.answerButton(button.callbackQueryId, answer.toast);
  }
}

async function pressed(deps: BotDeps, chatId: number, task: Task, data: CallbackData): Promise<Answer> {
  switch (data.action) {
    case "approve":
      return transitionByButton(deps, chatId, task, { type: "user.approved" });
    case "cancel":
      return transitionByButton(deps, chatId, task, { type: "user.cancelled" });
    case "edit":
      return editPressed(deps, chatId, task);
    case "more-budget":
      return transitionByButton(deps, chatId, task, {
        type: "user.budget-extended",
        budgetUsd: await extendedBudget(deps, task),
      });
    case "stop":
      return transitionByButton(deps, chatId, task, { type: "user.budget-stopped" });
  }
}

/**
 * Continue (+budget): what the task has spent plus one more budget (the configured one, else
 * the task's own when the setting was removed since), so the next run is not stopped at once.
 */
async function extendedBudget(deps: BotDeps, task: Task): Promise<number> {
  const { costUsd } = await deps.repos.traces.tracesSummary(task.id);
  return extendedBudgetUsd(costUsd, deps.limits.budgetUsd ?? task.budgetUsd ?? 0);
}

async function transitionByButton(
  deps: BotDeps,
  chatId: number,
  task: Task,
  event: TaskEvent,
): Promise<Answer> {
  try {
    await deps.transition(task.id, event);
    deps.logger.info({ taskId: task.id, event: event.type }, "transition by button");
    return {};
  } catch (err) {
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    if (refusal.reason === "already-approved") {
      return { toast: toastText(deps.locale, "task.already-approved", { taskId: task.id }) };
    }
    if (refusal.reason === "nothing-to-cancel")
      return { toast: toastText(deps.locale, "bot.nothing-to-cancel", {}) };
    if (refusal.reason === "not-paused") {
      const status = refusal.from as TelegramStatus;
      return { toast: toastText(deps.locale, "task.not-paused", { taskId: task.id, status }) };
    }
    await replyToRefusal(deps, chatId, task, refusal);
    return {};
  }
}

/** Edit asks for the changes; the next text is the edit, so this draft becomes the active task. */
async function editPressed(deps: BotDeps, chatId: number, task: Task): Promise<Answer> {
  if (IN_THE_WORKS.has(task.status))
    return { toast: toastText(deps.locale, "task.already-approved", { taskId: task.id }) };
  if (!DIALOGUE.has(task.status)) {
    await replyWithStatus(deps, chatId, task.id);
    return {};
  }
  const active = await deps.repos.tasks.findActiveByChat(chatId);
  if (active?.id !== task.id) await deps.activateTask(chatId, task.id);
  await reply(deps, { chatId, taskId: task.id }, "task.edit-prompt", { taskId: task.id });
  return {};
}
