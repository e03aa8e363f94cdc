import { Telegram } from "telegraf";
import { TelegramSender, type MessageExtra, type TelegramMessageApi } from "../telegram/index.ts";
import type { MessageChannel } from "./message-channel.ts";

export interface TelegramChannelOptions {
  token: string;
  /** A local Bot API server, or FakeTelegram in tests. */
  apiRoot?: string | undefined;
  /**
   * One Bot API call is given up after this long (telegraf has no timeout of its own). A call
   * given up may still have been delivered, so it is generous: a slow answer is a success, not
   * a doubt.
   */
  callTimeoutMs: number;
}

type CallOptions = NonNullable<Parameters<Telegram["callApi"]>[2]>;

/** telegraf types the signal as its abort-controller polyfill; its node-fetch takes the native one. */
function bounded(timeoutMs: number, signal?: AbortSignal): CallOptions {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
  return { signal: combined as unknown as CallOptions["signal"] };
}

/** telegraf's client behind the two calls TelegramSender makes, each bounded in time. */
function boundedApi(telegram: Telegram, timeoutMs: number): TelegramMessageApi {
  return {
    async sendMessage(chatId: number | string, text: string, extra?: MessageExtra, signal?: AbortSignal) {
      return telegram.callApi("sendMessage", { chat_id: chatId, text, ...extra }, bounded(timeoutMs, signal));
    },
    async editMessageText(chatId, messageId, _inline, text, extra) {
      const payload = { chat_id: chatId, message_id: messageId, text, ...extra };
      return telegram.callApi("editMessageText", payload, bounded(timeoutMs));
    },
  };
}

export function telegramChannel({ token, apiRoot, callTimeoutMs }: TelegramChannelOptions): MessageChannel {
  const telegram = new Telegram(token, apiRoot ? { apiRoot } : {});
  return new TelegramSender(boundedApi(telegram, callTimeoutMs));
}
