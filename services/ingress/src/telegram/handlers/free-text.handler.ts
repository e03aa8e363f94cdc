import { DialogueTurnRepository, isDuplicateTurn, telegramMessageKey, type Task } from "@ratatoskr/db";
import { isApprovalWord } from "../parsing/approval-words.ts";
import type { BotDeps, MessageInput } from "./bot-deps.ts";
import { openTask } from "./dialogue-commands.handler.ts";
import { refusalOf, replyToRefusal } from "./refusal-replies.ts";

/**
 * Free text (T3–T5). On a ready draft an approval word approves it; anything else is a dialogue
 * turn for the analyst. With no active task the text opens one (no greeting: the analyst's
 * first answer names the task), so a person never has to know about /start.
 */
export async function handleFreeText(deps: BotDeps, msg: MessageInput): Promise<void> {
  const active = await deps.repos.tasks.findActiveByChat(msg.chatId);
  if (active?.status === "ready" && isApprovalWord(msg.text)) return approveByWord(deps, msg, active);
  await addTurn(deps, msg, active ?? (await openTask(deps, msg)), true);
}

async function approveByWord(deps: BotDeps, msg: MessageInput, task: Task): Promise<void> {
  try {
    await deps.transition(task.id, { type: "user.approved" });
    deps.logger.info({ taskId: task.id }, "draft approved by word");
  } catch (err) {
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    // The draft changed since it was read (an edit on another replica): the word is then an edit.
    if (refusal.reason === "not-ready") return addTurn(deps, msg, task, true);
    await replyToRefusal(deps, msg.chatId, task, refusal);
  }
}

/**
 * Stores the turn and counts it in one transaction: a refused turn (approved, finished, turn
 * limit) leaves no row, and a stored one is always seen by the analysis that follows (T5).
 */
async function addTurn(deps: BotDeps, msg: MessageInput, task: Task, mayReopen: boolean): Promise<void> {
  try {
    await deps.transition(
      task.id,
      { type: "turn.received" },
      {
        alongside: async (tx) => {
          await new DialogueTurnRepository(tx).add({
            taskId: task.id,
            role: "user",
            text: msg.text,
            telegramMessageId: msg.messageId,
            messageKey: telegramMessageKey(msg.chatId, msg.messageId),
          });
        },
      },
    );
    deps.logger.info({ taskId: task.id, messageId: msg.messageId }, "dialogue turn stored");
  } catch (err) {
    if (isDuplicateTurn(err)) {
      // The same message again (a replay after a crash): it is already a turn, and counted once.
      deps.logger.info({ taskId: task.id, messageId: msg.messageId }, "dialogue turn already stored");
      return;
    }
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    // The task finished between the lookup and the lock (cancelled elsewhere, aborted by the
    // analyst): the text starts a new task, exactly as it would a moment later.
    if (refusal.reason === "finished" && mayReopen)
      return addTurn(deps, msg, await openTask(deps, msg), false);
    await replyToRefusal(deps, msg.chatId, task, refusal);
  }
}
