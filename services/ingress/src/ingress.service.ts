import { QUEUE, QUEUE_NAMES } from "@ratatoskr/contracts";
import { defineService, notImplemented } from "@ratatoskr/service-host";
import { loadBullBoardConfig } from "./bull-board/bull-board.config.ts";
import { registerBullBoard } from "./bull-board/bull-board.plugin.ts";

/** Front doors (Telegram, Gitea webhooks), Bull Board, and the intake worker. */
export const ingressService = defineService({
  name: "ingress",
  queues: [QUEUE.intake],
  defaultConcurrency: 4,
  async create(ctx) {
    const board = loadBullBoardConfig(ctx.env);
    if (!board.enabled) ctx.logger.warn("Bull Board disabled by BULL_BOARD_DISABLED");
    return {
      handlers: { [QUEUE.intake]: notImplemented("ingress", "routing Gitea commands") },
      routes: async (app) => {
        if (!board.enabled) return;
        await registerBullBoard(app, { ...board, queues: QUEUE_NAMES.map((q) => ctx.queues.queues[q]) });
      },
    };
  },
});
