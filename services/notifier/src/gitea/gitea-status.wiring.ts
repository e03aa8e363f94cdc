import { GiteaClient } from "@ratatoskr/gitea";
import type { Logger } from "@ratatoskr/runtime";
import type { ServiceContext } from "@ratatoskr/service-host";
import { loadGiteaStatusConfig } from "./gitea-status.config.ts";
import { createGiteaStatusHandler, type GiteaStatusHandler } from "./gitea-status.handler.ts";
import { startRunningStatusRefresher } from "./running-status.refresher.ts";

/** The notifier's Gitea side: status comments (G5) when GITEA_URL and GITEA_TOKEN are set. */
export function giteaStatusWiring(
  ctx: ServiceContext,
  logger: Logger,
): { handler: GiteaStatusHandler; start(): Array<() => Promise<void>> } {
  const config = loadGiteaStatusConfig(ctx.env);
  const gitea =
    config.url && config.token ? new GiteaClient({ baseUrl: config.url, token: config.token }) : undefined;
  const handler = createGiteaStatusHandler(gitea ? { db: ctx.db, repos: ctx.repos, gitea, queues: ctx.queues.queues } : undefined);
  return {
    handler,
    start: () =>
      gitea && config.refreshMs > 0
        ? [
            startRunningStatusRefresher({
              repos: ctx.repos,
              queues: ctx.queues,
              logger,
              intervalMs: config.refreshMs,
            }),
          ]
        : [],
  };
}
