import { join } from "node:path";
import { QUEUE, type TaskEvent } from "@ratatoskr/contracts";
import type { ApplyTransitionOptions } from "@ratatoskr/db";
import { agentOpencodeClient, createTaskGit, runningStep, startStepSweeper } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { loadReviewerConfig, REVIEWER_CONFIG_SCHEMA } from "./config/reviewer.config.ts";
import { bySource } from "@ratatoskr/gitea";
import { createReviewHandler } from "./handlers/review.handler.ts";
import { createGiteaReviewHandler } from "./gitea/gitea-review.handler.ts";

/** Reviews a task branch's diff with the reviewer agent. */
export const reviewerService = defineService({
  name: "reviewer",
  queues: [QUEUE.review],
  configSchema: REVIEWER_CONFIG_SCHEMA,
  checkConfig: (env) => void loadReviewerConfig(env),
  defaultConcurrency: 2,
  async create(ctx) {
    const config = loadReviewerConfig(ctx.env);
    const logger = ctx.logger.child({ component: "reviewer" });
    const opencode = agentOpencodeClient(config.opencode, logger);
    ctx.shutdown.register("connections", "opencode client", () => opencode.close());
    // Its own clones, never the dev's working trees: a review reads what was pushed.
    const git = createTaskGit(config.git, join(config.git.workspaceDir, "review"), logger);
    const transition = (taskId: number, event: TaskEvent, options?: ApplyTransitionOptions) => ctx.transition(taskId, event, options);
    const common = {
      repos: ctx.repos,
      transition,
      opencode,
      git,
      idleTimeoutMs: config.reviewer.idleTimeoutMs,
      hardTimeoutMs: config.reviewer.hardTimeoutMs,
      maxDiffChars: config.reviewer.maxDiffChars,
      statusPollMs: config.reviewer.statusPollMs,
    };
    const handler = createReviewHandler(common);
    const gitea = createGiteaReviewHandler({ ...common, redis: ctx.redis, prefix: ctx.config.queue.prefix });
    let stopSweeper: (() => Promise<void>) | undefined;
    return {
      // Postgres is the truth: tasks waiting on a review job Redis lost or that gave up are put right.
      async start() {
        stopSweeper = startStepSweeper(
          { dispatcher: ctx.dispatcher, logger, intervalMs: config.sweep.intervalMs, graceMs: config.sweep.graceMs, name: "review-sweeper" },
          [runningStep({ prisma: ctx.db.prisma, queues: ctx.queues, transition }, QUEUE.review)],
        );
      },
      async stop() {
        await stopSweeper?.();
      },
      handlers: { [QUEUE.review]: bySource(ctx.repos.tasks, { telegram: handler, gitea }) },
      checks: {
        opencode: async () => {
          await opencode.checkServer();
        },
      },
    };
  },
});
