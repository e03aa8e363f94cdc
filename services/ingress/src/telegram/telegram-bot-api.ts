import { createBotApiClient } from "@ratatoskr/runtime";
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

/** The Bot API client behind BotApi; `apiRoot` points it at a local Bot API server or a fake. */
export function createBotApi(token: string, apiRoot?: string): BotApi {
  const telegram = createBotApiClient(token, apiRoot);
  return {
    getMe: () => telegram.call("getMe", {}),
    setMyCommands: (commands) => telegram.call("setMyCommands", { commands }),
    setWebhook: (url, secretToken) =>
      telegram.call("setWebhook", { url, secret_token: secretToken, allowed_updates: [...ALLOWED_UPDATES] }),
    deleteWebhook: () => telegram.call("deleteWebhook", {}),
    answerCallbackQuery: (id, text) => telegram.call("answerCallbackQuery", { text, callback_query_id: id }),
    getUpdates: async ({ offset, timeoutSec, limit }, signal) =>
      telegram.call(
        "getUpdates",
        { offset, timeout: timeoutSec, ...(limit ? { limit } : {}), allowed_updates: [...ALLOWED_UPDATES] },
        signal,
      ),
  };
}
