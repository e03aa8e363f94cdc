import { QUEUE } from "@ratatoskr/contracts";
import { wireAgentStep } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { loadReviewerConfig, REVIEWER_CONFIG_SCHEMA } from "./config/reviewer.config.ts";
import { createReviewHandler } from "./handlers/review.handler.ts";

/** Reviews a task branch's diff (or a command's plan) with the reviewer agent: one handler for every door. */
export const reviewerService = defineService({
  name: "reviewer",
  queues: [QUEUE.review],
  configSchema: REVIEWER_CONFIG_SCHEMA,
  checkConfig: (env) => void loadReviewerConfig(env),
  defaultConcurrency: 2,
  async create(ctx) {
    const config = loadReviewerConfig(ctx.env);
    const step = wireAgentStep(ctx, config, { component: "reviewer", queue: QUEUE.review });
    return { ...step.lifecycle, handlers: { [QUEUE.review]: createReviewHandler({ ...step.deps, ...config.reviewer }) } };
  },
});
