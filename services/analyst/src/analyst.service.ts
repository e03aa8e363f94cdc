import { QUEUE } from "@ratatoskr/contracts";
import { createOpencodeClient, type OpencodeClient } from "@ratatoskr/opencode";
import type { Logger } from "@ratatoskr/runtime";
import { defineService } from "@ratatoskr/service-host";
import { ANALYST_CONFIG_SCHEMA, loadAnalystConfig, type AnalystConfig } from "./config/analyst.config.ts";
import { createAnalyseTurnHandler } from "./handlers/analyse-turn.handler.ts";
import { createRepositoryDirectory } from "./repositories/repository-directory.factory.ts";

/** The start-up check must not hold the process up for long: readiness keeps checking anyway. */
const STARTUP_CHECK_TIMEOUT_MS = 10_000;

function isLoopback(url: string): boolean {
  return ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);
}

function opencodeClient(config: AnalystConfig["opencode"], logger: Logger): OpencodeClient {
  if (!config.password && !isLoopback(config.url)) {
    logger.warn(
      { url: config.url },
      "OPENCODE_SERVER_PASSWORD is not set for an opencode server beyond loopback",
    );
  }
  return createOpencodeClient({
    baseUrl: config.url,
    logger,
    ...(config.password ? { password: config.password } : {}),
    ...(config.model ? { defaultModel: config.model } : {}),
    ...(config.configFile ? { configFile: config.configFile } : {}),
  });
}

/**
 * O1: a server that is down, too old or lacks the v2 routes is reported clearly at start, but the
 * service still starts: readiness stays false and jobs retry until opencode is there.
 */
async function checkAtStart(client: OpencodeClient, logger: Logger): Promise<void> {
  try {
    const info = await client.checkServer(AbortSignal.timeout(STARTUP_CHECK_TIMEOUT_MS));
    logger.info({ url: info.url, version: info.version }, "opencode server checked");
  } catch (err) {
    logger.error(
      { err },
      "opencode server not usable; analyst jobs wait and readiness stays false until it is",
    );
  }
}

/** Clarifies requests with the analyst agent (dialogue turns; Gitea plans in a later issue). */
export const analystService = defineService({
  name: "analyst",
  queues: [QUEUE.analyst],
  configSchema: ANALYST_CONFIG_SCHEMA,
  defaultConcurrency: 4,
  async create(ctx) {
    const config = loadAnalystConfig(ctx.env);
    const logger = ctx.logger.child({ component: "analyst" });
    const client = opencodeClient(config.opencode, logger);
    ctx.shutdown.register("connections", "opencode client", () => client.close());
    const repositories = createRepositoryDirectory(config.repositories, logger);
    if (repositories)
      logger.info({ repositories: repositories.description }, "draft repositories are checked to exist");
    await checkAtStart(client, logger);

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
