import { QUEUE } from "@ratatoskr/contracts";
import { defineService, notImplemented } from "@ratatoskr/service-host";

/** Implements approved tasks on a branch with the dev agent, commits and pushes. */
export const devService = defineService({
  name: "dev",
  queues: [QUEUE.dev],
  defaultConcurrency: 2,
  async create() {
    return { handlers: { [QUEUE.dev]: notImplemented("dev", "running the dev agent") } };
  },
});
