import { classifyTelegramError } from "./telegram-error.classifier.ts";
import {
  PermanentTelegramError,
  RetryAfterError,
  TransientTelegramError,
  UncertainDeliveryError,
} from "./telegram-send.errors.ts";
import { splitMessage, TELEGRAM_MESSAGE_LIMIT } from "./split-message.ts";

export type InlineButton = { text: string; callback_data: string } | { text: string; url: string };

export interface InlineKeyboard {
  inline_keyboard: InlineButton[][];
}

export interface MessageExtra {
  parse_mode: "HTML";
  reply_markup?: InlineKeyboard;
  link_preview_options?: { is_disabled: boolean };
  /** The forum topic the message goes to. */
  message_thread_id?: number;
}

/** The two Bot API calls the sender needs. telegraf's `Telegram` (`bot.telegram`) satisfies it. */
export interface TelegramMessageApi {
  sendMessage(
    chatId: number | string,
    text: string,
    extra?: MessageExtra,
    signal?: AbortSignal,
  ): Promise<{ message_id: number }>;
  editMessageText(
    chatId: number | string | undefined,
    messageId: number | undefined,
    inlineMessageId: undefined,
    text: string,
    extra?: MessageExtra,
  ): Promise<unknown>;
}

export interface SendOptions {
  /** Inline keyboard, attached to the last part so it sits under the whole message. */
  replyMarkup?: InlineKeyboard;
  /**
   * Ids of the parts an earlier attempt already delivered (an error's `sentMessageIds`); those
   * parts are skipped so a retried job does not repeat them.
   */
  alreadySent?: readonly number[];
  /**
   * Put before the first part sent in this call (e.g. "(resent)"); the split is the same as
   * without it, so a resumed send stays aligned with the parts that went out.
   */
  leadIn?: string;
  /** Aborts the calls in flight (the sender lost its chat lease). */
  signal?: AbortSignal;
  /** The chat's forum topic to send into (message_thread_id); every part goes there. */
  threadId?: number | null;
}

export interface TelegramSenderOptions {
  /** Per-part limit in UTF-16 code units; default Telegram's 4096. */
  limit?: number;
  /** Show link previews (PR links would otherwise expand into cards). Default false. */
  linkPreviews?: boolean;
}

/** Turns a failed call into the typed error the queue layer acts on. */
function sendError(err: unknown, sentMessageIds: readonly number[]): Error {
  const verdict = classifyTelegramError(err);
  const ids = [...sentMessageIds];
  switch (verdict.kind) {
    case "retry-after":
      return new RetryAfterError(verdict.retryAfterMs, ids, { cause: err });
    case "permanent":
      return new PermanentTelegramError(verdict.reason, verdict.description, ids, { cause: err });
    case "transient":
      return new TransientTelegramError(verdict.description, ids, { cause: err });
    case "in-doubt":
      return new UncertainDeliveryError(verdict.description, ids, { cause: err });
  }
}

/**
 * Delivers one logical HTML message as as many Telegram messages as its length needs, in order.
 * It never sleeps: a 429 becomes a `RetryAfterError` for the queue to delay the job, other
 * failures become `PermanentTelegramError` / `TransientTelegramError`; all carry the ids of the
 * parts already sent so the retry resumes after them.
 */
export class TelegramSender {
  private readonly limit: number;
  private readonly extra: Omit<MessageExtra, "reply_markup">;

  constructor(
    private readonly api: TelegramMessageApi,
    options: TelegramSenderOptions = {},
  ) {
    this.limit = options.limit ?? TELEGRAM_MESSAGE_LIMIT;
    this.extra = { parse_mode: "HTML", link_preview_options: { is_disabled: !options.linkPreviews } };
  }

  /** Sends the parts of `html`; returns the message ids of all parts, earlier attempts' included. */
  async send(chatId: number | string, html: string, options: SendOptions = {}): Promise<number[]> {
    const parts = splitMessage(html, this.limit);
    const from = options.alreadySent?.length ?? 0;
    if (options.leadIn && from < parts.length) parts[from] = `${options.leadIn}${parts[from] as string}`;
    return this.sendParts(chatId, parts, options.alreadySent ?? [], options.replyMarkup, options.signal, options.threadId);
  }

  /**
   * Replaces the text (and keyboard) of a sent message. If the new text needs several parts, the
   * first replaces the message and the rest follow as new messages. An identical edit counts as
   * done. Returns the ids of the edited message and of any added parts. (A retry after a failure
   * among the added parts sends those again; edits of our status messages stay far below 4096.)
   */
  async edit(
    chatId: number | string,
    messageId: number,
    html: string,
    options: Pick<SendOptions, "replyMarkup"> = {},
  ): Promise<number[]> {
    const [first = html, ...rest] = splitMessage(html, this.limit);
    const markup = rest.length === 0 ? options.replyMarkup : undefined;
    try {
      await this.api.editMessageText(chatId, messageId, undefined, first, this.extraWith(markup));
    } catch (err) {
      const verdict = classifyTelegramError(err);
      // An edit repeated is harmless: an answer lost in transit is simply worth retrying.
      if (verdict.kind === "in-doubt") throw new TransientTelegramError(verdict.description, [], { cause: err });
      if (!(verdict.kind === "permanent" && verdict.reason === "message-not-modified"))
        throw sendError(err, []);
    }
    if (rest.length === 0) return [messageId];
    const added = await this.sendParts(chatId, rest, [], options.replyMarkup);
    return [messageId, ...added];
  }

  private async sendParts(
    chatId: number | string,
    parts: string[],
    alreadySent: readonly number[],
    replyMarkup: InlineKeyboard | undefined,
    signal?: AbortSignal,
    threadId?: number | null,
  ): Promise<number[]> {
    const topic = threadId === undefined || threadId === null ? {} : { message_thread_id: threadId };
    const ids = [...alreadySent];
    for (let index = alreadySent.length; index < parts.length; index++) {
      const isLast = index === parts.length - 1;
      try {
        const sent = await this.api.sendMessage(
          chatId,
          parts[index] as string,
          { ...this.extraWith(isLast ? replyMarkup : undefined), ...topic },
          signal,
        );
        ids.push(sent.message_id);
      } catch (err) {
        throw sendError(err, ids);
      }
    }
    return ids;
  }

  private extraWith(replyMarkup: InlineKeyboard | undefined): MessageExtra {
    return replyMarkup ? { ...this.extra, reply_markup: replyMarkup } : { ...this.extra };
  }
}
