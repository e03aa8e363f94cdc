import { isAllowed } from "../access/allowlist.ts";
import { parseText, type BotCommandName } from "../parsing/command-parser.ts";
import type { TelegramInput } from "../parsing/telegram-input.ts";
import type { BotDeps, MessageInput } from "./bot-deps.ts";
import { handleCancel, handleSkip, handleStart } from "./dialogue-commands.handler.ts";
import { handleDraftButton } from "./draft-button.handler.ts";
import { handleFreeText } from "./free-text.handler.ts";
import { handleHelp, handleUnknownCommand, handleVersions } from "./info-commands.handler.ts";
import { reply } from "./reply.ts";
import { handleAttach, handleContinue, handleRetry, handleTaskStatus } from "./task-commands.handler.ts";

type CommandHandler = (deps: BotDeps, msg: MessageInput, args: string) => Promise<void>;

/** One handler per command; a command without one does not compile. */
const COMMAND_HANDLERS: Record<BotCommandName, CommandHandler> = {
  start: handleStart,
  cancel: handleCancel,
  skip: handleSkip,
  retry: handleRetry,
  status: (deps, msg, args) => (args === "" ? handleVersions(deps, msg) : handleTaskStatus(deps, msg, args)),
  continue: handleContinue,
  attach: handleAttach,
  help: handleHelp,
};

/** Someone not on the allowlist: told once per chat, and nothing of theirs is stored (T2). */
async function refuse(deps: BotDeps, chatId: number, userId: number | null): Promise<void> {
  const first = await deps.refusedChats.firstRefusal(chatId);
  deps.logger.info({ chatId, userId, first }, "telegram sender not on the allowlist");
  if (first) await reply(deps, { chatId, taskId: null }, "bot.not-allowed", {});
}

async function handleMessage(deps: BotDeps, msg: MessageInput): Promise<void> {
  const parsed = parseText(msg.text, deps.botUsername());
  switch (parsed.kind) {
    case "text":
      return handleFreeText(deps, { ...msg, text: parsed.text });
    case "command":
      return COMMAND_HANDLERS[parsed.command](deps, msg, parsed.args);
    case "unknown-command":
      return handleUnknownCommand(deps, msg, parsed.command);
    case "foreign-command":
      return;
  }
}

/** Entry point for one update, already in its chat's order. */
export async function handleTelegramInput(chatDeps: BotDeps, input: TelegramInput): Promise<void> {
  // Answers go to the forum topic the update came from (and a task opened here keeps it).
  const deps = input.threadId === null ? chatDeps : { ...chatDeps, threadId: input.threadId };
  if (input.chatId === null) {
    if (input.kind === "button") await deps.answerButton(input.callbackQueryId);
    return;
  }
  // Edits and the like are not someone writing to the bot: nothing to do, nobody to refuse.
  if (input.kind === "other") return;
  const { chatId } = input;
  if (!isAllowed(deps.allowlist, { chatId, userId: input.userId })) {
    if (input.kind === "button") await deps.answerButton(input.callbackQueryId);
    return refuse(deps, chatId, input.userId);
  }
  switch (input.kind) {
    case "message":
      return handleMessage(deps, {
        chatId,
        userId: input.userId,
        messageId: input.messageId,
        text: input.text,
      });
    case "button":
      return handleDraftButton(deps, { chatId, callbackQueryId: input.callbackQueryId, data: input.data });
    case "media":
      return reply(deps, { chatId, taskId: null }, "bot.text-only", {});
  }
}
