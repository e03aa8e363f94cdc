import { API_ERRORS } from "./bot-api.error.ts";
import type { InlineKeyboardMarkup } from "./bot-api.types.ts";
import { optionalJson, optionalString, type Params } from "./request-params.ts";
import { parseTelegramHtml, type MessageEntity } from "./telegram-html.parser.ts";

/** Telegram's limit: 1–4096 characters after entity parsing (counted here in UTF-16 units). */
export const MESSAGE_TEXT_LIMIT = 4096;
const CALLBACK_DATA_MAX_BYTES = 64;

export interface MessageContent {
  text: string;
  plainText: string;
  entities: MessageEntity[];
  parseMode: string | undefined;
}

/** Validates `text` + `parse_mode` the way sendMessage/editMessageText do. */
export function readContent(params: Params): MessageContent {
  const text = optionalString(params, "text") ?? "";
  const parseMode = optionalString(params, "parse_mode");
  let plainText = text;
  let entities: MessageEntity[] = [];
  if (parseMode !== undefined) {
    if (parseMode.toLowerCase() !== "html") throw API_ERRORS.unsupportedParseMode(parseMode);
    const parsed = parseTelegramHtml(text);
    if (!parsed.ok) throw API_ERRORS.cantParseEntities(parsed.error);
    plainText = parsed.text;
    entities = parsed.entities;
  }
  if (plainText.trim() === "") throw API_ERRORS.textEmpty();
  if (plainText.length > MESSAGE_TEXT_LIMIT) throw API_ERRORS.messageTooLong();
  return { text, plainText, entities, parseMode };
}

function badButton(detail: string): never {
  throw API_ERRORS.badParameter(`can't parse inline keyboard button: ${detail}`);
}

/** Validates an inline keyboard; other keyboard kinds are outside the subset we use. */
export function readInlineKeyboard(params: Params): InlineKeyboardMarkup | undefined {
  const raw = optionalJson(params, "reply_markup", "reply keyboard markup");
  if (raw === undefined) return undefined;
  const rows = (raw as { inline_keyboard?: unknown }).inline_keyboard;
  if (!Array.isArray(rows)) throw API_ERRORS.badParameter("can't parse reply keyboard markup JSON object");
  const keyboard: InlineKeyboardMarkup = { inline_keyboard: [] };
  for (const row of rows) {
    if (!Array.isArray(row)) badButton('field "inline_keyboard" must be an Array of Arrays');
    keyboard.inline_keyboard.push(
      row.map((button: unknown) => {
        const { text, callback_data: data, url } = (button ?? {}) as Record<string, unknown>;
        if (typeof text !== "string" || text === "") badButton("Text must be non-empty");
        if (data === undefined && url === undefined)
          badButton("Text buttons are unallowed in the inline keyboard");
        if (data !== undefined) {
          const size = Buffer.byteLength(String(data), "utf8");
          if (size < 1 || size > CALLBACK_DATA_MAX_BYTES) throw API_ERRORS.buttonDataInvalid();
          return { text, callback_data: String(data) };
        }
        return { text, url: String(url) };
      }),
    );
  }
  return keyboard;
}
