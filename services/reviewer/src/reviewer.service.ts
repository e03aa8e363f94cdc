import { QUEUE } from "@ratatoskr/contracts";
import { bySource } from "@ratatoskr/gitea";
import { wireAgentStep } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { loadReviewerConfig, REVIEWER_CONFIG_SCHEMA } from "./config/reviewer.config.ts";
import { createGiteaReviewHandler } from "./gitea/gitea-review.handler.ts";
import { createReviewHandler } from "./handlers/review.handler.ts";

/** Reviews a task branch's diff with the reviewer agent. */
export const reviewerService = defineService({
  name: "reviewer",
  queues: [QUEUE.review],
  configSchema: REVIEWER_CONFIG_SCHEMA,
  checkConfig: (env) => void loadReviewerConfig(env),
  defaultConcurrency: 2,
  async create(ctx) {
    const config = loadReviewerConfig(ctx.env);
    const step = wireAgentStep(ctx, config, { component: "reviewer", queue: QUEUE.review });
    const deps = { ...step.deps, ...config.reviewer };
    const telegram = createReviewHandler(deps);
    const gitea = createGiteaReviewHandler({ ...deps, ...step.heartbeat });
    return { ...step.lifecycle, handlers: { [QUEUE.review]: bySource(ctx.repos.tasks, { telegram, gitea }) } };
  },
});
