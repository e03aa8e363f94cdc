import { QUEUE } from "@ratatoskr/contracts";
import { defineService, notImplemented } from "@ratatoskr/service-host";

/** Delivers messages to Telegram chats and Gitea status comments. */
export const notifierService = defineService({
  name: "notifier",
  queues: [QUEUE.notify],
  defaultConcurrency: 8,
  async create() {
    return { handlers: { [QUEUE.notify]: notImplemented("notifier", "sending notifications") } };
  },
});
