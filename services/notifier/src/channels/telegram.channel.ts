import { Telegram } from "telegraf";
import { TelegramSender, type MessageExtra, type TelegramMessageApi } from "../telegram/index.ts";
import type { MessageChannel } from "./message-channel.ts";

/** One Bot API call never holds a claimed message longer than this (telegraf has no timeout of its own). */
const CALL_TIMEOUT_MS = 20_000;

export interface TelegramChannelOptions {
  token: string;
  /** A local Bot API server, or FakeTelegram in tests. */
  apiRoot?: string | undefined;
}

type CallOptions = NonNullable<Parameters<Telegram["callApi"]>[2]>;

/** telegraf types the signal as its abort-controller polyfill; its node-fetch takes the native one. */
const bounded = (): CallOptions => ({
  signal: AbortSignal.timeout(CALL_TIMEOUT_MS) as unknown as CallOptions["signal"],
});

/** telegraf's client behind the two calls TelegramSender makes, each bounded in time. */
function boundedApi(telegram: Telegram): TelegramMessageApi {
  return {
    async sendMessage(chatId: number | string, text: string, extra?: MessageExtra) {
      return telegram.callApi("sendMessage", { chat_id: chatId, text, ...extra }, bounded());
    },
    async editMessageText(chatId, messageId, _inline, text, extra) {
      const payload = { chat_id: chatId, message_id: messageId, text, ...extra };
      return telegram.callApi("editMessageText", payload, bounded());
    },
  };
}

export function telegramChannel({ token, apiRoot }: TelegramChannelOptions): MessageChannel {
  const telegram = new Telegram(token, apiRoot ? { apiRoot } : {});
  return new TelegramSender(boundedApi(telegram));
}
