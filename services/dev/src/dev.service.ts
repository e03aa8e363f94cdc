import { QUEUE } from "@ratatoskr/contracts";
import { bySource } from "@ratatoskr/gitea";
import { wireAgentStep } from "@ratatoskr/pipeline";
import { defineService } from "@ratatoskr/service-host";
import { DEV_CONFIG_SCHEMA, loadDevConfig } from "./config/dev.config.ts";
import { createGiteaDevHandler } from "./gitea/gitea-dev.handler.ts";
import { createDevRoundHandler } from "./handlers/dev-round.handler.ts";

/** Implements approved tasks (and Gitea commands) on a branch with the dev agent, commits and pushes. */
export const devService = defineService({
  name: "dev",
  queues: [QUEUE.dev],
  configSchema: DEV_CONFIG_SCHEMA,
  checkConfig: (env) => void loadDevConfig(env),
  defaultConcurrency: 2,
  async create(ctx) {
    const config = loadDevConfig(ctx.env);
    const step = wireAgentStep(ctx, config, { component: "dev", queue: QUEUE.dev });
    const deps = { ...step.deps, ...config.dev };
    const telegram = createDevRoundHandler(deps);
    const gitea = createGiteaDevHandler({ ...deps, ...step.heartbeat });
    return { ...step.lifecycle, handlers: { [QUEUE.dev]: bySource(ctx.repos.tasks, { telegram, gitea }) } };
  },
});
