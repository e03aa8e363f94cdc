import type { ServiceVersion } from "@ratatoskr/notifier";
import { readServiceHeartbeats, type ServiceContext } from "@ratatoskr/service-host";
import { redisRefusedChats } from "./access/refused-chats.store.ts";
import type { TelegramConfig } from "./config/telegram.config.ts";
import { createTelegramFrontDoor, type TelegramFrontDoor } from "./telegram-front-door.ts";
import { telegrafBotApi, type BotApi } from "./telegram-bot-api.ts";

type EnabledTelegram = Extract<TelegramConfig, { enabled: true }>;

/** One line per service and version: replicas of the same build are listed once. */
export async function runningVersions(
  ctx: Pick<ServiceContext, "redis" | "config">,
): Promise<ServiceVersion[]> {
  const beats = await readServiceHeartbeats(ctx.redis, ctx.config.queue.prefix);
  const seen = new Map<string, ServiceVersion>();
  for (const { name, version } of beats) seen.set(`${name}@${version}`, { name, version });
  return [...seen.values()];
}

/** Builds the Telegram front door from the service context (the host's connections and repos). */
export function telegramFrontDoor(
  ctx: ServiceContext,
  config: EnabledTelegram,
  api?: BotApi,
): TelegramFrontDoor {
  const botApi = api ?? telegrafBotApi(config.token, config.apiRoot);
  return createTelegramFrontDoor({
    api: botApi,
    intake: config.intake,
    logger: ctx.logger,
    deps: {
      repos: ctx.repos,
      transition: (taskId, event, options) => ctx.transition(taskId, event, options),
      enqueue: (request) => ctx.queues.enqueue(request),
      queues: ctx.queues.queues,
      logger: ctx.logger,
      allowlist: config.allowlist,
      refusedChats: redisRefusedChats(ctx.redis, ctx.config.queue.prefix),
      limits: config.limits,
      locale: config.locale,
      readVersions: () => runningVersions(ctx),
      answerButton: async (id, text) => {
        // A press older than Telegram's window cannot be answered any more; that is no failure.
        await botApi
          .answerCallbackQuery(id, text)
          .catch((err: unknown) => ctx.logger.warn({ err }, "answerCallbackQuery failed"));
      },
      activateTask: (chatId, taskId) => ctx.repos.tasks.setActiveTask(chatId, taskId),
    },
  });
}
