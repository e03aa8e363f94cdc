import { QUEUE } from "@ratatoskr/contracts";
import { defineService, notImplemented } from "@ratatoskr/service-host";

/** Explains failed and timed-out tasks from their traces. */
export const postmortemService = defineService({
  name: "postmortem",
  queues: [QUEUE.postmortem],
  defaultConcurrency: 2,
  async create() {
    return { handlers: { [QUEUE.postmortem]: notImplemented("postmortem", "explaining failed tasks") } };
  },
});
