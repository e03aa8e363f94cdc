import { QUEUE } from "@ratatoskr/contracts";
import { wireAgentStep } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { DEV_CONFIG_SCHEMA, loadDevConfig } from "./config/dev.config.ts";
import { createDevRoundHandler } from "./handlers/dev-round.handler.ts";

/** Implements tasks on a branch with the dev agent, commits and pushes: one handler for every door. */
export const devService = defineService({
  name: "dev",
  queues: [QUEUE.dev],
  configSchema: DEV_CONFIG_SCHEMA,
  checkConfig: (env) => void loadDevConfig(env),
  defaultConcurrency: 2,
  async create(ctx) {
    const config = loadDevConfig(ctx.env);
    const step = wireAgentStep(ctx, config, { component: "dev", queue: QUEUE.dev });
    return { ...step.lifecycle, handlers: { [QUEUE.dev]: createDevRoundHandler({ ...step.deps, ...config.dev }) } };
  },
});
