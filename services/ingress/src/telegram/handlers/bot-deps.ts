import type { Repositories } from "@ratatoskr/db";
import type { Locale, ServiceVersion } from "@ratatoskr/notifier";
import type { Logger, QueueSet } from "@ratatoskr/runtime";
import type { ServiceContext } from "@ratatoskr/service-host";
import type { Allowlist } from "../access/allowlist.ts";
import type { RefusedChats } from "../access/refused-chats.store.ts";
import type { TaskLimits } from "../config/telegram.config.ts";

/** Everything the Telegram handlers use, passed in so tests and the host wire it differently. */
export interface BotDeps {
  repos: Repositories;
  /** Applies a state-machine event and enqueues its follow-ups (ServiceContext.transition). */
  transition: ServiceContext["transition"];
  /** Puts a reply's notify job on its queue. */
  enqueue: QueueSet["enqueue"];
  /** The queues, read for a running agent job's live progress (`/status N`). */
  queues: QueueSet["queues"];
  logger: Logger;
  allowlist: Allowlist;
  refusedChats: RefusedChats;
  limits: TaskLimits;
  /** Language of the toasts ingress shows itself (messages are rendered by the notifier). */
  locale: Locale;
  /** Known once getMe answered; used to ignore `/cmd@another_bot`. */
  botUsername(): string | undefined;
  /** Versions of the running services, from their heartbeats. */
  readVersions(): Promise<ServiceVersion[]>;
  /** answerCallbackQuery; `text` shows as a toast. Never throws: a failed answer is only logged. */
  answerButton(callbackQueryId: string, text?: string): Promise<void>;
  /** Points the chat's free text at this task. */
  activateTask(chatId: number, taskId: number): Promise<void>;
  /** The forum topic (message_thread_id) of the update being handled; replies go there. */
  threadId?: number;
}

export interface MessageInput {
  chatId: number;
  userId: number | null;
  messageId: number;
  text: string;
}
