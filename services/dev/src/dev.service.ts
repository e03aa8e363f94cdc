import { QUEUE, type TaskEvent } from "@ratatoskr/contracts";
import type { ApplyTransitionOptions } from "@ratatoskr/db";
import { join } from "node:path";
import { agentOpencodeClient, createTaskGit, runningStep, startStepSweeper } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { DEV_CONFIG_SCHEMA, loadDevConfig } from "./config/dev.config.ts";
import { createDevRoundHandler } from "./handlers/dev-round.handler.ts";
import { createGiteaDevHandler } from "./gitea/gitea-dev.handler.ts";
import { bySource } from "@ratatoskr/gitea";

/** Implements approved tasks (and Gitea commands) on a branch with the dev agent, commits and pushes. */
export const devService = defineService({
  name: "dev",
  queues: [QUEUE.dev],
  configSchema: DEV_CONFIG_SCHEMA,
  checkConfig: (env) => void loadDevConfig(env),
  defaultConcurrency: 2,
  async create(ctx) {
    const config = loadDevConfig(ctx.env);
    const logger = ctx.logger.child({ component: "dev" });
    const opencode = agentOpencodeClient(config.opencode, logger);
    ctx.shutdown.register("connections", "opencode client", () => opencode.close());
    // Its own subdirectory: the reviewer may share WORKSPACE_DIR and keeps its own clones.
    const git = createTaskGit(config.git, join(config.git.workspaceDir, "dev"), logger);
    const transition = (taskId: number, event: TaskEvent, options?: ApplyTransitionOptions) => ctx.transition(taskId, event, options);
    const common = {
      repos: ctx.repos,
      transition,
      opencode,
      git,
      idleTimeoutMs: config.dev.idleTimeoutMs,
      hardTimeoutMs: config.dev.hardTimeoutMs,
      statusPollMs: config.dev.statusPollMs,
    };
    const handler = createDevRoundHandler(common);
    const gitea = createGiteaDevHandler({ ...common, redis: ctx.redis, prefix: ctx.config.queue.prefix });
    let stopSweeper: (() => Promise<void>) | undefined;
    return {
      // Postgres is the truth: tasks waiting on a dev job Redis lost or that gave up are put right.
      async start() {
        stopSweeper = startStepSweeper(
          { dispatcher: ctx.dispatcher, logger, intervalMs: config.sweep.intervalMs, graceMs: config.sweep.graceMs, name: "dev-sweeper" },
          [runningStep({ prisma: ctx.db.prisma, queues: ctx.queues, transition }, QUEUE.dev)],
        );
      },
      async stop() {
        await stopSweeper?.();
      },
      handlers: { [QUEUE.dev]: bySource(ctx.repos.tasks, { telegram: handler, gitea }) },
      checks: {
        opencode: async () => {
          await opencode.checkServer();
        },
      },
    };
  },
});
