import type { MessageEntity } from "./telegram-html.parser.ts";

/** The subset of Bot API objects the fake produces (https://core.telegram.org/bots/api#available-types). */
export interface User {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  language_code?: string;
}

export interface Chat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  title?: string;
  first_name?: string;
  username?: string;
}

export interface InlineKeyboardButton {
  text: string;
  callback_data?: string;
  url?: string;
}

export interface InlineKeyboardMarkup {
  inline_keyboard: InlineKeyboardButton[][];
}

export interface Message {
  message_id: number;
  from?: User;
  chat: Chat;
  date: number;
  edit_date?: number;
  text?: string;
  entities?: MessageEntity[];
  reply_markup?: InlineKeyboardMarkup;
}

export interface CallbackQuery {
  id: string;
  from: User;
  message?: Message;
  chat_instance: string;
  data?: string;
}

export interface Update {
  update_id: number;
  message?: Message;
  callback_query?: CallbackQuery;
}

/** The kind of an update, as named in `allowed_updates`. */
export type UpdateType = "message" | "callback_query";

export function updateType(update: Update): UpdateType {
  return update.message ? "message" : "callback_query";
}

export interface WebhookInfo {
  url: string;
  has_custom_certificate: boolean;
  pending_update_count: number;
  last_error_date?: number;
  last_error_message?: string;
  max_connections?: number;
  allowed_updates?: string[];
}

export interface BotCommand {
  command: string;
  description: string;
}

/** Unix time in seconds, as every Bot API date. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
