import { QUEUE } from "@ratatoskr/contracts";
import { defineService, notImplemented } from "@ratatoskr/service-host";

/** Clarifies requests with the analyst agent (dialogue turns, Gitea plans). */
export const analystService = defineService({
  name: "analyst",
  queues: [QUEUE.analyst],
  defaultConcurrency: 4,
  async create() {
    return { handlers: { [QUEUE.analyst]: notImplemented("analyst", "running the analyst agent") } };
  },
});
