import type { BotCommand, User } from "./bot-api.types.ts";
import type { ChatStore } from "./chat.store.ts";
import type { Params } from "./request-params.ts";
import type { SentLog } from "./sent.log.ts";
import type { UpdateQueue } from "./update.queue.ts";
import type { WebhookDeliverer } from "./webhook.deliverer.ts";

/** How the bot answered one button press. */
export interface CallbackAnswer {
  text?: string;
  showAlert: boolean;
  url?: string;
}

export interface CallbackQueryState {
  chatId: number;
  messageId: number;
  data: string;
  answer: CallbackAnswer | undefined;
}

/** The state one Bot API method may read and change. */
export interface MethodContext {
  bot: User;
  chats: ChatStore;
  sent: SentLog;
  updates: UpdateQueue;
  webhook: WebhookDeliverer;
  callbackQueries: Map<string, CallbackQueryState>;
  commands: { list: BotCommand[] };
  /** Aborted when the HTTP client goes away (ends a held long poll). */
  signal: AbortSignal;
}

export type MethodHandler = (params: Params, ctx: MethodContext) => unknown;
