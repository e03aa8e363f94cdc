import type { Logger } from "@ratatoskr/runtime";
import type { MessageChannel } from "./message-channel.ts";

/**
 * Writes each message to the log instead of a chat: what the notifier runs on without
 * TELEGRAM_BOT_TOKEN. Message ids are left empty; nothing was sent anywhere.
 */
export function logChannel(logger: Logger): MessageChannel {
  const log = logger.child({ component: "log-channel" });
  return {
    async send(chatId, html, options) {
      const buttons = options.replyMarkup?.inline_keyboard.flat().map((button) => button.text);
      log.info(
        { chatId, text: html, ...(buttons ? { buttons } : {}) },
        "message (no Telegram bot configured)",
      );
      return [];
    },
  };
}
