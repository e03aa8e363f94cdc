import { QUEUE } from "@ratatoskr/contracts";
import { agentOpencodeClient } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { loadPostmortemConfig, POSTMORTEM_CONFIG_SCHEMA } from "./config/postmortem.config.ts";
import { createExplainFailureHandler } from "./handlers/explain-failure.handler.ts";

/** Explains failed and timed-out tasks from their traces (P6). */
export const postmortemService = defineService({
  name: "postmortem",
  queues: [QUEUE.postmortem],
  configSchema: POSTMORTEM_CONFIG_SCHEMA,
  checkConfig: (env) => void loadPostmortemConfig(env),
  defaultConcurrency: 2,
  async create(ctx) {
    const config = loadPostmortemConfig(ctx.env);
    const logger = ctx.logger.child({ component: "postmortem" });
    const opencode = agentOpencodeClient(config.opencode, logger);
    ctx.shutdown.register("connections", "opencode client", () => opencode.close());
    const handler = createExplainFailureHandler({
      repos: ctx.repos,
      opencode,
      enqueue: (request) => ctx.queues.enqueue(request),
      workspaceDir: config.workspace.dir,
      traceBudgetChars: config.postmortem.traceBudgetChars,
      idleTimeoutMs: config.postmortem.idleTimeoutMs,
      hardTimeoutMs: config.postmortem.hardTimeoutMs,
    });
    return {
      handlers: { [QUEUE.postmortem]: handler },
      checks: {
        opencode: async () => {
          await opencode.checkServer();
        },
      },
    };
  },
});
