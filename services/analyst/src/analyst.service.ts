import { QUEUE } from "@ratatoskr/contracts";
import { checkOpencodeAtStart, createOpencodeClientFromConfig } from "@ratatoskr/opencode";
import { defineService } from "@ratatoskr/service-host";
import { ANALYST_CONFIG_SCHEMA, loadAnalystConfig } from "./config/analyst.config.ts";
import { createAnalyseTurnHandler } from "./handlers/analyse-turn.handler.ts";
import { startAnalysisSweeper } from "./maintenance/analysis-sweeper.ts";
import { createRepositoryDirectory } from "./repositories/repository-directory.factory.ts";

/** Clarifies requests with the analyst agent (dialogue turns; Gitea plans in a later issue). */
export const analystService = defineService({
  name: "analyst",
  queues: [QUEUE.analyst],
  configSchema: ANALYST_CONFIG_SCHEMA,
  defaultConcurrency: 4,
  async create(ctx) {
    const config = loadAnalystConfig(ctx.env);
    const logger = ctx.logger.child({ component: "analyst" });
    const client = createOpencodeClientFromConfig(config.opencode, logger);
    ctx.shutdown.register("connections", "opencode client", () => client.close());
    const repositories = createRepositoryDirectory(config.repositories, logger);
    if (repositories)
      logger.info({ repositories: repositories.description }, "draft repositories are checked to exist");
    await checkOpencodeAtStart(client, logger, "analyst");

    const handler = createAnalyseTurnHandler({
      repos: ctx.repos,
      transition: (taskId, event, options) => ctx.transition(taskId, event, options),
      opencode: client,
      repositories,
      workspaceDir: config.workspace.dir,
      idleTimeoutMs: config.analyst.idleTimeoutMs,
      hardTimeoutMs: config.analyst.hardTimeoutMs,
      maxQuestions: config.analyst.maxQuestions,
    });
    let stopSweeper: (() => Promise<void>) | undefined;
    return {
      handlers: { [QUEUE.analyst]: handler },
      // Redis can be lost; the analyses Postgres says are waiting are found and put right.
      async start() {
        stopSweeper = startAnalysisSweeper({
          prisma: ctx.db.prisma,
          queues: ctx.queues,
          dispatcher: ctx.dispatcher,
          transition: (taskId, event, options) => ctx.transition(taskId, event, options),
          logger,
          intervalMs: config.sweep.intervalMs,
          graceMs: config.sweep.graceMs,
        });
      },
      async stop() {
        await stopSweeper?.();
      },
      checks: {
        opencode: async () => {
          await client.checkServer();
        },
      },
    };
  },
});
