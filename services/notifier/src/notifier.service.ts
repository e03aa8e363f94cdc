import { QUEUE } from "@ratatoskr/contracts";
import type { UncertainOutcome } from "@ratatoskr/db";
import { Counter } from "prom-client";
import type { Logger } from "@ratatoskr/runtime";
import { defineService, type ServiceContext } from "@ratatoskr/service-host";
import { logChannel } from "./channels/log.channel.ts";
import type { MessageChannel } from "./channels/message-channel.ts";
import { telegramChannel } from "./channels/telegram.channel.ts";
import { loadNotifierConfig, NOTIFIER_CONFIG_SCHEMA, type NotifierConfig } from "./config/notifier.config.ts";
import { BackgroundWork } from "./delivery/background-work.ts";
import { ChatLocks } from "./delivery/chat-lock.ts";
import type { DoubtCause } from "./delivery/deliver-notification.ts";
import { createSendPacer } from "./delivery/send-pacer.ts";
import { GITEA_STATUS_CONFIG_SCHEMA, loadGiteaStatusConfig } from "./gitea/gitea-status.config.ts";
import { giteaStatusWiring } from "./gitea/gitea-status.wiring.ts";
import { drainLeftChat } from "./delivery/left-chat.ts";
import { createNotifyHandler } from "./handlers/notify.handler.ts";
import { startLeftBehindSweeper } from "./maintenance/left-behind.sweeper.ts";
import { startStaleSendingSweeper } from "./maintenance/stale-sending.sweeper.ts";
import { startUnqueuedPendingSweeper } from "./maintenance/unqueued-pending.sweeper.ts";

/**
 * Frees a chat whose sender died within seconds. The holder renews it every third of this in the
 * background, Bot API calls in flight included.
 */
const CHAT_LEASE_TTL_MS = 4_000;

/** A claim younger than this is a send just gone out; the left-behind sweep passes it over. */
const LEFT_SENDING_AFTER_MS = 1_000;

/**
 * An untried message younger than this is on its way through its job; the left-behind sweep
 * passes it over. Older with its chat free, it is sent by the sweep, whether its job died with a
 * notifier or waits behind a backlog.
 */
const LEFT_PENDING_AFTER_MS = 5_000;

export interface NotifierServiceOptions {
  /**
   * Where messages go instead of the default (Telegram with TELEGRAM_BOT_TOKEN, else the log),
   * e.g. the demo's console chat.
   */
  channel?: (ctx: ServiceContext, config: NotifierConfig) => MessageChannel;
}

function defaultChannel(config: NotifierConfig, logger: Logger): MessageChannel {
  const { token, apiRoot, sendTimeoutMs } = config.telegram;
  if (token) return telegramChannel({ token, apiRoot, callTimeoutMs: sendTimeoutMs });
  logger.warn("TELEGRAM_BOT_TOKEN not set: the notifier writes messages to its log instead of Telegram");
  return logChannel(logger);
}

/** Delivers messages to Telegram chats (and, in a later issue, Gitea status comments). */
export function createNotifierService(options: NotifierServiceOptions = {}) {
  return defineService({
    name: "notifier",
    queues: [QUEUE.notify],
    configSchema: { ...NOTIFIER_CONFIG_SCHEMA, ...GITEA_STATUS_CONFIG_SCHEMA },
    checkConfig: (env) => {
      loadNotifierConfig(env);
      loadGiteaStatusConfig(env);
    },
    defaultConcurrency: 8,
    async create(ctx) {
      const config = loadNotifierConfig(ctx.env);
      const logger = ctx.logger.child({ component: "notifier" });
      const prefix = ctx.config.queue.prefix;
      const gitea = giteaStatusWiring(ctx, logger);
      const doubtful = new Counter({
        name: "ratatoskr_notifications_in_doubt_total",
        help:
          "Sends that may or may not have reached the chat (answer lost, sender died), by what became of them: " +
          "resent (must-deliver, sent once more marked) or uncertain (not resent)",
        labelNames: ["settled", "cause"],
        registers: [ctx.metrics.registry],
      });
      const pacer = createSendPacer({ redis: ctx.redis, prefix, ...config.pacing });
      const delivery = {
        onDoubt: (settled: UncertainOutcome, cause: DoubtCause) =>
          doubtful.inc({ settled: settled === "resend" ? "resent" : "uncertain", cause }),
        notifications: ctx.repos.notifications,
        tasks: ctx.repos.tasks,
        channel: options.channel?.(ctx, config) ?? defaultChannel(config, logger),
        defaultLocale: config.telegram.locale,
        pacer,
        chatLocks: new ChatLocks({ redis: ctx.redis, prefix, ttlMs: CHAT_LEASE_TTL_MS, pacer: pacer.scriptArgs }),
      };
      const background = new BackgroundWork();
      // After the workers have drained (their jobs hand off work) and before Redis closes.
      ctx.shutdown.register("queues", "notifier lease releases", () => background.settled());
      const handler = createNotifyHandler({
        ...delivery,
        background,
        busyChatRetryMs: config.pacing.chatIntervalMs / 2,
        giteaStatus: gitea.handler,
      });
      const stops: Array<() => Promise<void>> = [];
      return {
        handlers: { [QUEUE.notify]: handler },
        start: async () => {
          const { afterMs, unqueuedAfterMs, sweepIntervalMs, leftSweepIntervalMs } = config.staleSending;
          const notifications = ctx.repos.notifications;
          stops.push(...gitea.start());
          stops.push(
            startLeftBehindSweeper({
              notifications,
              drainChat: (chatId, signal) => drainLeftChat(delivery, chatId, signal, logger),
              logger,
              claimedBeforeMs: LEFT_SENDING_AFTER_MS,
              pendingBeforeMs: LEFT_PENDING_AFTER_MS,
              intervalMs: leftSweepIntervalMs,
            }),
            startStaleSendingSweeper({
              notifications,
              enqueueBulk: (requests) => ctx.queues.enqueueBulk(requests),
              logger,
              olderThanMs: afterMs,
              intervalMs: sweepIntervalMs,
              onSettled: (settled, count) =>
                doubtful.inc({ settled: settled === "resend" ? "resent" : "uncertain", cause: "sender-died" }, count),
            }),
            startUnqueuedPendingSweeper({
              notifications,
              enqueueBulk: (requests) => ctx.queues.enqueueBulk(requests),
              logger,
              olderThanMs: unqueuedAfterMs,
              intervalMs: sweepIntervalMs,
            }),
          );
        },
        stop: async () => {
          await Promise.all(stops.map((stop) => stop()));
        },
      };
    },
  });
}

export const notifierService = createNotifierService();
