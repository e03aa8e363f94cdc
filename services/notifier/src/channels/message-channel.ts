import type { SendOptions } from "../telegram/index.ts";

/**
 * Where rendered messages go. TelegramSender is the real one; without a bot token (demo mode,
 * tests of other services) a log channel stands in, so the pipeline runs the same either way.
 * Errors follow TelegramSender's: RetryAfterError, PermanentTelegramError, TransientTelegramError.
 */
export interface MessageChannel {
  /** Sends one logical message (split into parts as needed); returns every part's message id. */
  send(chatId: number, html: string, options: SendOptions): Promise<number[]>;
}
