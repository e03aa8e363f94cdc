import { Telegram } from "telegraf";
import type { UpdateSource } from "./delivery/telegram-poller.ts";

export interface BotCommandEntry {
  command: string;
  description: string;
}

/** The Bot API calls ingress makes itself; replies go through the notifier instead. */
export interface BotApi extends UpdateSource {
  getMe(): Promise<{ username?: string }>;
  setMyCommands(commands: readonly BotCommandEntry[]): Promise<unknown>;
  /** Telegram will send `secretToken` in X-Telegram-Bot-Api-Secret-Token with every update. */
  setWebhook(url: string, secretToken: string): Promise<unknown>;
  deleteWebhook(): Promise<unknown>;
  /** Stops the button's spinner; `text` shows as a toast. */
  answerCallbackQuery(callbackQueryId: string, text?: string): Promise<unknown>;
}

/** Update kinds the bot asks for; everything else never reaches it. */
export const ALLOWED_UPDATES = ["message", "callback_query"] as const;

/** telegraf's client behind BotApi; `apiRoot` points it at a local Bot API server or a fake. */
export function telegrafBotApi(token: string, apiRoot?: string): BotApi {
  const telegram = new Telegram(token, apiRoot ? { apiRoot } : {});
  return {
    getMe: () => telegram.getMe(),
    setMyCommands: (commands) => telegram.setMyCommands(commands),
    setWebhook: (url, secretToken) =>
      telegram.setWebhook(url, { secret_token: secretToken, allowed_updates: [...ALLOWED_UPDATES] }),
    deleteWebhook: () => telegram.deleteWebhook(),
    answerCallbackQuery: (id, text) => telegram.answerCbQuery(id, text),
    getUpdates: async ({ offset, timeoutSec, limit }, signal) =>
      telegram.callApi(
        "getUpdates",
        { offset, timeout: timeoutSec, ...(limit ? { limit } : {}), allowed_updates: [...ALLOWED_UPDATES] },
        // telegraf types the signal with the abort-controller polyfill; Node's own is compatible.
        { signal: signal as unknown as NonNullable<Parameters<Telegram["callApi"]>[2]>["signal"] },
      ),
  };
}
