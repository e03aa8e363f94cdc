import type { User } from "./bot-api.types.ts";
import type { MessageEntity } from "./telegram-html.parser.ts";

/**
 * `bot_command` entities the way Telegram marks them in a user's text: a `/word` (optionally
 * `@botname`) at the start or after whitespace. Offsets are UTF-16, like every Bot API offset.
 */
export function botCommandEntities(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  for (const match of text.matchAll(
    /(^|\s)(\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?)(?![A-Za-z0-9_@])/g,
  )) {
    const lead = match[1] ?? "";
    const command = match[2] ?? "";
    entities.push({ type: "bot_command", offset: (match.index ?? 0) + lead.length, length: command.length });
  }
  return entities;
}

/** The person writing in a chat: in a private chat the user id equals the chat id. */
export function defaultUser(chatId: number, from?: Partial<User>): User {
  const id = from?.id ?? Math.abs(chatId);
  return { id, is_bot: false, first_name: `User ${id}`, username: `user${id}`, language_code: "en", ...from };
}
