import { API_ERRORS } from "./bot-api.error.ts";
import { unixNow, type Chat, type Message } from "./bot-api.types.ts";
import type { StoredMessage } from "./chat.store.ts";
import { readContent, readInlineKeyboard } from "./message-content.ts";
import type { MethodContext, MethodHandler } from "./method.context.ts";
import {
  optionalBool,
  optionalInt,
  optionalString,
  requiredChatId,
  requiredInt,
  type Params,
} from "./request-params.ts";
import type { SentRecord } from "./sent.log.ts";

const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);

/** The Bot API `Message` object for a stored message. */
export function toApiMessage(chat: Chat, stored: StoredMessage): Message {
  const message: Message = { message_id: stored.messageId, from: stored.from, chat, date: stored.date };
  if (stored.editDate !== undefined) message.edit_date = stored.editDate;
  message.text = stored.plainText;
  if (stored.entities.length > 0) message.entities = stored.entities;
  if (stored.replyMarkup) message.reply_markup = stored.replyMarkup;
  return message;
}

function record(ctx: MethodContext, kind: SentRecord["kind"], chatId: number, stored: StoredMessage): void {
  ctx.sent.append({
    kind,
    chatId,
    messageId: stored.messageId,
    text: stored.text,
    plainText: stored.plainText,
    entities: stored.entities,
    parseMode: stored.parseMode,
    replyMarkup: stored.replyMarkup,
    time: Date.now(),
  });
}

/** The bot's own, not deleted message addressed by chat_id + message_id. */
function editable(params: Params, ctx: MethodContext): { chat: Chat; stored: StoredMessage } {
  if (optionalInt(params, "message_id") === undefined) {
    if (optionalString(params, "inline_message_id") !== undefined) {
      throw API_ERRORS.badParameter("inline messages are not supported by the fake");
    }
    throw API_ERRORS.messageIdMissing();
  }
  const chatId = requiredChatId(params);
  const chat = ctx.chats.writable(chatId);
  const stored = ctx.chats.get(chatId, requiredInt(params, "message_id"));
  if (!stored) throw API_ERRORS.messageToEditNotFound();
  if (stored.author !== "bot") throw API_ERRORS.badParameter("message can't be edited");
  return { chat, stored };
}

const sameMarkup = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

const sendMessage: MethodHandler = (params, ctx) => {
  const chatId = requiredChatId(params);
  const chat = ctx.chats.writable(chatId);
  const content = readContent(params);
  const replyMarkup = readInlineKeyboard(params);
  const stored = ctx.chats.add(chatId, {
    author: "bot",
    from: ctx.bot,
    ...content,
    replyMarkup,
    date: unixNow(),
  });
  record(ctx, "sent", chatId, stored);
  return toApiMessage(chat, stored);
};

/** Like the real API, an edit without `reply_markup` removes the message's inline keyboard. */
const editMessageText: MethodHandler = (params, ctx) => {
  const { chat, stored } = editable(params, ctx);
  const content = readContent(params);
  const replyMarkup = readInlineKeyboard(params);
  const unchanged =
    content.plainText === stored.plainText &&
    sameMarkup(content.entities, stored.entities) &&
    sameMarkup(replyMarkup, stored.replyMarkup);
  if (unchanged) throw API_ERRORS.notModified();
  Object.assign(stored, content, { replyMarkup, editDate: unixNow() });
  record(ctx, "edited", chat.id, stored);
  return toApiMessage(chat, stored);
};

const editMessageReplyMarkup: MethodHandler = (params, ctx) => {
  const { chat, stored } = editable(params, ctx);
  const replyMarkup = readInlineKeyboard(params);
  if (sameMarkup(replyMarkup, stored.replyMarkup)) throw API_ERRORS.notModified();
  Object.assign(stored, { replyMarkup, editDate: unixNow() });
  record(ctx, "edited", chat.id, stored);
  return toApiMessage(chat, stored);
};

const deleteMessage: MethodHandler = (params, ctx) => {
  const chatId = requiredChatId(params);
  ctx.chats.writable(chatId);
  const stored = ctx.chats.get(chatId, requiredInt(params, "message_id"));
  if (!stored) throw API_ERRORS.messageToDeleteNotFound();
  stored.deleted = true;
  return true;
};

const sendChatAction: MethodHandler = (params, ctx) => {
  ctx.chats.writable(requiredChatId(params));
  const action = optionalString(params, "action");
  if (action === undefined) throw API_ERRORS.parameterEmpty("action");
  if (!CHAT_ACTIONS.has(action)) throw API_ERRORS.chatActionInvalid();
  return true;
};

const answerCallbackQuery: MethodHandler = (params, ctx) => {
  const id = optionalString(params, "callback_query_id");
  if (id === undefined) throw API_ERRORS.parameterEmpty("callback_query_id");
  const query = ctx.callbackQueries.get(id);
  if (!query || query.answer) throw API_ERRORS.callbackQueryInvalid();
  const text = optionalString(params, "text");
  const url = optionalString(params, "url");
  query.answer = {
    showAlert: optionalBool(params, "show_alert"),
    ...(text ? { text } : {}),
    ...(url ? { url } : {}),
  };
  return true;
};

export const MESSAGE_METHODS: Record<string, MethodHandler> = {
  sendMessage,
  editMessageText,
  editMessageReplyMarkup,
  deleteMessage,
  sendChatAction,
  answerCallbackQuery,
};
