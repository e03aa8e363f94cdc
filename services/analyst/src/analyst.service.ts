import { QUEUE } from "@ratatoskr/contracts";
import { checkOpencodeAtStart, createOpencodeClientFromConfig } from "@ratatoskr/opencode";
import { defineService } from "@ratatoskr/service-host";
import { ANALYST_CONFIG_SCHEMA, loadAnalystConfig } from "./config/analyst.config.ts";
import { createAnalyseTurnHandler } from "./handlers/analyse-turn.handler.ts";
import { createRepositoryDirectory } from "./repositories/repository-directory.factory.ts";

/** Clarifies requests with the analyst agent (dialogue turns; Gitea plans in a later issue). */
export const analystService = defineService({
  name: "analyst",
  queues: [QUEUE.analyst],
  configSchema: ANALYST_CONFIG_SCHEMA,
  checkConfig: (env) => void loadAnalystConfig(env),
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
    return {
      handlers: { [QUEUE.analyst]: handler },
      checks: {
        opencode: async () => {
          await client.checkServer();
        },
      },
    };
  },
});
