import { QUEUE, QUEUE_NAMES } from "@ratatoskr/contracts";
import { collectConfigProblems, ConfigError, readinessReportOf } from "@ratatoskr/runtime";
import { defineService, notImplemented } from "@ratatoskr/service-host";
import { BULL_BOARD_CONFIG_SCHEMA, loadBullBoardConfig } from "./bull-board/bull-board.config.ts";
import { registerBullBoard } from "./bull-board/bull-board.plugin.ts";
import { createLoginGuard } from "./bull-board/login-guard.ts";
import { GITEA_INGRESS_CONFIG_SCHEMA, loadGiteaIngressConfig } from "./gitea/config/gitea.config.ts";
import { giteaFrontDoor } from "./gitea/gitea-wiring.ts";
import { loadTelegramConfig, TELEGRAM_CONFIG_SCHEMA } from "./telegram/config/telegram.config.ts";
import { telegramFrontDoor } from "./telegram/telegram-wiring.ts";

/** Front doors (Telegram, Gitea webhooks), Bull Board, and the intake worker. */
export const ingressService = defineService({
  name: "ingress",
  queues: [QUEUE.intake],
  configSchema: { ...TELEGRAM_CONFIG_SCHEMA, ...GITEA_INGRESS_CONFIG_SCHEMA, ...BULL_BOARD_CONFIG_SCHEMA },
  // Each loader reports its own rules; the host collects them all before connecting.
  checkConfig: (env) => {
    const problems = collectConfigProblems([
      () => loadBullBoardConfig(env),
      () => loadTelegramConfig(env),
      () => loadGiteaIngressConfig(env),
    ]);
    if (problems.length > 0) throw new ConfigError(problems);
  },
  defaultConcurrency: 4,
  async create(ctx) {
    const board = loadBullBoardConfig(ctx.env);
    if (!board.enabled) ctx.logger.warn("Bull Board disabled by BULL_BOARD_DISABLED");
    const telegram = loadTelegramConfig(ctx.env);
    // Without a token ingress still serves Gitea and Bull Board (demo mode, tests).
    if (!telegram.enabled) ctx.logger.warn("TELEGRAM_BOT_TOKEN not set: the Telegram front door is off");
    const frontDoor = telegram.enabled ? telegramFrontDoor(ctx, telegram) : undefined;
    const giteaConfig = loadGiteaIngressConfig(ctx.env);
    if (!giteaConfig.enabled)
      ctx.logger.warn("GITEA_URL or GITEA_WEBHOOK_SECRET not set: the Gitea front door is off");
    const gitea = giteaConfig.enabled
      ? giteaFrontDoor(ctx, giteaConfig, {
          maxRounds: telegram.limits.maxRounds,
          budgetUsd: telegram.limits.budgetUsd,
          opencodePassword: giteaConfig.opencodePassword,
        })
      : undefined;
    return {
      handlers: {
        [QUEUE.intake]:
          gitea?.intake ?? notImplemented("ingress", "routing Gitea commands without GITEA_URL"),
      },
      routes: async (app) => {
        await frontDoor?.routes(app);
        await gitea?.routes(app);
        if (!board.enabled) return;
        const guard = createLoginGuard({
          redis: ctx.redis,
          keyPrefix: `${ctx.config.queue.prefix}:board-login`,
          logger: ctx.logger.child({ component: "bull-board" }),
          failures: ctx.metrics.loginFailures,
          realm: "bull-board",
        });
        await registerBullBoard(app, {
          ...board,
          queues: QUEUE_NAMES.map((q) => ctx.queues.queues[q]),
          guard,
          readinessDetail: () => readinessReportOf(app),
        });
      },
      start: async () => {
        await frontDoor?.start();
        await gitea?.start();
      },
      stop: async () => {
        await gitea?.stop();
        await frontDoor?.stop();
      },
    };
  },
});
