import {
  ConfigError,
  envDurationMs,
  envInt,
  envList,
  envString,
  envUrl,
  loadConfig,
  type ConfigOf,
} from "@ratatoskr/runtime";
import { STEP_SWEEP_CONFIG_SCHEMA } from "@ratatoskr/pipeline";

export const GITEA_INGRESS_CONFIG_SCHEMA = {
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
    webhookSecret: envString("GITEA_WEBHOOK_SECRET", {
      optional: true,
      secret: true,
      description:
        "Secret of the Gitea webhook (HMAC-SHA256 of each delivery); with GITEA_URL it turns on POST /webhooks/gitea",
    }),
    botLogin: envString("GITEA_BOT_LOGIN", {
      optional: true,
      description:
        "Login of the bot account, whose own comments are ignored; unset: asked from Gitea with the token",
    }),
    maxRunning: envInt("GITEA_MAX_RUNNING", {
      default: 4,
      min: 1,
      description: "Gitea commands running at once over all issues and PRs (one per issue/PR at most)",
    }),
    sweepIntervalMs: envDurationMs("GITEA_SWEEP_INTERVAL_MS", {
      default: 60_000,
      description:
        "How often the repositories in GITEA_REPOS are read for /agent comments whose webhook never arrived; 0 turns it off",
    }),
    repos: envList("GITEA_REPOS", {
      optional: true,
      description: "Repositories (owner/name) the sweep reads for missed /agent comments",
    }),
    bodyLimitBytes: envInt("GITEA_WEBHOOK_BODY_LIMIT_BYTES", {
      default: 1_048_576,
      min: 1024,
      description: "Largest webhook delivery accepted; larger ones get 413",
    }),
    opencodePassword: envString("OPENCODE_SERVER_PASSWORD", {
      optional: true,
      secret: true,
      description:
        "Basic-auth password of opencode serve (user opencode); set it whenever the server listens beyond loopback",
    }),
    planRounds: envInt("GITEA_PLAN_REVIEW_ROUNDS", {
      default: 4,
      min: 1,
      description: "Plan ⇄ plan-review rounds of /agent plan",
    }),
  },
  sweep: STEP_SWEEP_CONFIG_SCHEMA,
};

type Raw = ConfigOf<typeof GITEA_INGRESS_CONFIG_SCHEMA>["gitea"];

export type GiteaIngressConfig =
  | { enabled: false }
  | (Omit<Raw, "url" | "token" | "webhookSecret" | "repos"> & {
      enabled: true;
      sweep: ConfigOf<typeof GITEA_INGRESS_CONFIG_SCHEMA>["sweep"];
      url: string;
      token: string;
      webhookSecret: string;
      repos: { owner: string; repo: string }[];
    });

/** The Gitea front door is on when GITEA_URL and GITEA_WEBHOOK_SECRET are set; then the token is required. */
export function loadGiteaIngressConfig(env: NodeJS.ProcessEnv): GiteaIngressConfig {
  const { gitea, sweep } = loadConfig(GITEA_INGRESS_CONFIG_SCHEMA, env);
  if (!gitea.url || !gitea.webhookSecret) return { enabled: false };
  if (!gitea.token)
    throw new ConfigError([{ name: "GITEA_TOKEN", message: "is required when GITEA_URL is set" }]);
  const repos = (gitea.repos ?? []).map((fullName) => {
    const [owner = "", repo = "", extra] = fullName.split("/");
    if (!owner || !repo || extra !== undefined) {
      throw new ConfigError([
        { name: "GITEA_REPOS", message: `must list owner/name, got ${JSON.stringify(fullName)}` },
      ]);
    }
    return { owner, repo };
  });
  return {
    ...gitea,
    enabled: true,
    sweep,
    url: gitea.url,
    token: gitea.token,
    webhookSecret: gitea.webhookSecret,
    repos,
  };
}
