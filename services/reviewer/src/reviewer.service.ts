import { QUEUE } from "@ratatoskr/contracts";
import { defineService, notImplemented } from "@ratatoskr/service-host";

/** Reviews a task branch's diff with the reviewer agent. */
export const reviewerService = defineService({
  name: "reviewer",
  queues: [QUEUE.review],
  defaultConcurrency: 2,
  async create() {
    return { handlers: { [QUEUE.review]: notImplemented("reviewer", "running the reviewer agent") } };
  },
});
