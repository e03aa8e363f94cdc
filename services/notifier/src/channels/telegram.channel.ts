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

/**
 * Calls the Bot API with a signal that aborts after `timeoutMs` or with `signal`. One controller
 * and a timer, cleared when the call ends: `AbortSignal.timeout` + `AbortSignal.any` cost a
 * good part of a send's CPU on the hot path. (telegraf types the signal as its abort-controller
 * polyfill; its node-fetch takes the native one.)
 */
async function bounded<T>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  call: (options: CallOptions) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError")),
    timeoutMs,
  );
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await call({ signal: controller.signal as unknown as CallOptions["signal"] });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** telegraf's client behind the two calls TelegramSender makes, each bounded in time. */
function boundedApi(telegram: Telegram, timeoutMs: number): TelegramMessageApi {
  return {
    async sendMessage(chatId: number | string, text: string, extra?: MessageExtra, signal?: AbortSignal) {
      const payload = { chat_id: chatId, text, ...extra };
      return bounded(timeoutMs, signal, (options) => telegram.callApi("sendMessage", payload, options));
    },
    async editMessageText(chatId, messageId, _inline, text, extra) {
      const payload = { chat_id: chatId, message_id: messageId, text, ...extra };
      return bounded(timeoutMs, undefined, (options) => telegram.callApi("editMessageText", payload, options));
    },
  };
}

export function telegramChannel({ token, apiRoot, callTimeoutMs }: TelegramChannelOptions): MessageChannel {
  const telegram = new Telegram(token, apiRoot ? { apiRoot } : {});
  return new TelegramSender(boundedApi(telegram, callTimeoutMs));
}
