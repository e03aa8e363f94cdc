export { FakeTelegram, type FakeTelegramOptions, type RecordedRequest } from "./fake-telegram.server.ts";
export { BotApiError, API_ERRORS, type ResponseParameters } from "./bot-api.error.ts";
export type { InjectedFailure } from "./failure.injector.ts";
export type { SentRecord, SentCondition, WaitOptions } from "./sent.log.ts";
export type { StoredMessage, ChatBlock } from "./chat.store.ts";
export type { CallbackAnswer } from "./method.context.ts";
export type {
  User,
  Chat,
  Message,
  CallbackQuery,
  Update,
  UpdateType,
  InlineKeyboardButton,
  InlineKeyboardMarkup,
  WebhookInfo,
  BotCommand,
} from "./bot-api.types.ts";
export { parseTelegramHtml, type HtmlParseResult, type MessageEntity } from "./telegram-html.parser.ts";
export { MESSAGE_TEXT_LIMIT } from "./message-content.ts";
