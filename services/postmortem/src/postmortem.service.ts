import { QUEUE } from "@ratatoskr/contracts";
import { checkOpencodeAtStart, createOpencodeClientFromConfig } from "@ratatoskr/opencode";
import { ensureSharedAgentDir, startStepSweeper, warmSharedAgentDir } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { loadPostmortemConfig, POSTMORTEM_CONFIG_SCHEMA } from "./config/postmortem.config.ts";
import { createExplainFailureHandler } from "./handlers/explain-failure.handler.ts";
import { postmortemStep } from "./maintenance/postmortem-step.ts";

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
    const opencode = createOpencodeClientFromConfig(config.opencode, logger);
    ctx.shutdown.register("connections", "opencode client", () => opencode.close());
    const directory = await ensureSharedAgentDir(config.workspace.dir, "postmortem");
    let stopWarming: (() => void) | undefined;
    const handler = createExplainFailureHandler({
      repos: ctx.repos,
      opencode,
      enqueue: (request) => ctx.queues.enqueue(request),
      directory,
      traceBudgetChars: config.postmortem.traceBudgetChars,
      idleTimeoutMs: config.postmortem.idleTimeoutMs,
      hardTimeoutMs: config.postmortem.hardTimeoutMs,
    });
    let stopSweeper: (() => Promise<void>) | undefined;
    const step = postmortemStep({ prisma: ctx.db.prisma, repos: ctx.repos, queues: ctx.queues, enqueue: (request) => ctx.queues.enqueue(request) });
    return {
      handlers: { [QUEUE.postmortem]: handler },
      // Postgres is the truth: a postmortem Redis lost is queued again, one that gave up says so.
      async start() {
        await checkOpencodeAtStart(opencode, logger, "postmortem");
        // opencode boots the postmortem directory now, not in the first explanation.
        stopWarming = warmSharedAgentDir(opencode, directory, logger);
        stopSweeper = startStepSweeper(
          { dispatcher: ctx.dispatcher, logger, intervalMs: config.sweep.intervalMs, graceMs: config.sweep.graceMs, name: "postmortem-sweeper" },
          [step],
        );
      },
      async stop() {
        stopWarming?.();
        await stopSweeper?.();
      },
      checks: {
        opencode: async () => {
          await opencode.checkServer();
        },
      },
    };
  },
});
