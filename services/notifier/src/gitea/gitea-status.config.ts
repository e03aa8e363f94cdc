import { envDurationMs, envString, envUrl, loadConfig, type ConfigOf, type Env } from "@ratatoskr/runtime";

/** GITEA_URL and GITEA_TOKEN are the same variables ingress and the analyst read: one bot account. */
export const GITEA_STATUS_CONFIG_SCHEMA = {
  gitea: {
    url: envUrl("GITEA_URL", {
      optional: true,
      protocols: ["https", "http"],
      description: "Gitea server (root URL) holding the repositories tasks work on",
    }),
    token: envString("GITEA_TOKEN", {
      optional: true,
      secret: true,
      description: "Gitea API token of the bot account; required with GITEA_URL",
    }),
    refreshMs: envDurationMs("GITEA_STATUS_REFRESH_MS", {
      default: 30_000,
      description:
        "How often the status comment of a running Gitea command is brought up to date (elapsed time, tokens, cost), and one that lags its command (its update lost with Redis); 0 turns it off",
    }),
  },
};

export type GiteaStatusConfig = ConfigOf<typeof GITEA_STATUS_CONFIG_SCHEMA>["gitea"];

export function loadGiteaStatusConfig(env: Env): GiteaStatusConfig {
  return loadConfig(GITEA_STATUS_CONFIG_SCHEMA, env).gitea;
}
