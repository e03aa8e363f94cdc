import { QUEUE, QUEUE_NAMES } from "@ratatoskr/contracts";
import { defineService, notImplemented } from "@ratatoskr/service-host";
import { BULL_BOARD_CONFIG_SCHEMA, loadBullBoardConfig } from "./bull-board/bull-board.config.ts";
import { registerBullBoard } from "./bull-board/bull-board.plugin.ts";
import { loadTelegramConfig, TELEGRAM_CONFIG_SCHEMA } from "./telegram/config/telegram.config.ts";
import { telegramFrontDoor } from "./telegram/telegram-wiring.ts";

/** Front doors (Telegram, Gitea webhooks), Bull Board, and the intake worker. */
export const ingressService = defineService({
  name: "ingress",
  queues: [QUEUE.intake],
  configSchema: { ...TELEGRAM_CONFIG_SCHEMA, ...BULL_BOARD_CONFIG_SCHEMA },
  defaultConcurrency: 4,
  async create(ctx) {
    const board = loadBullBoardConfig(ctx.env);
    if (!board.enabled) ctx.logger.warn("Bull Board disabled by BULL_BOARD_DISABLED");
    const telegram = loadTelegramConfig(ctx.env);
    // Without a token ingress still serves Gitea and Bull Board (demo mode, tests).
    if (!telegram.enabled) ctx.logger.warn("TELEGRAM_BOT_TOKEN not set: the Telegram front door is off");
    const frontDoor = telegram.enabled ? telegramFrontDoor(ctx, telegram) : undefined;
    return {
      handlers: { [QUEUE.intake]: notImplemented("ingress", "routing Gitea commands") },
      routes: async (app) => {
        await frontDoor?.routes(app);
        if (!board.enabled) return;
        await registerBullBoard(app, { ...board, queues: QUEUE_NAMES.map((q) => ctx.queues.queues[q]) });
      },
      start: async () => frontDoor?.start(),
      stop: async () => frontDoor?.stop(),
    };
  },
});
