import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ConfigError,
  envDurationMs,
  envInt,
  envString,
  envUrl,
  loadConfig,
  type ConfigOf,
  type Env,
} from "@ratatoskr/runtime";

/** opencode's own default `serve` port, so a local setup works without configuration. */
const DEFAULT_OPENCODE_URL = "http://127.0.0.1:4096";

export const ANALYST_CONFIG_SCHEMA = {
  opencode: {
    url: envUrl("OPENCODE_URL", {
      default: DEFAULT_OPENCODE_URL,
      protocols: ["http", "https"],
      description: "opencode serve the agents run in (its v2 API, version >= 1.18.18)",
    }),
    password: envString("OPENCODE_SERVER_PASSWORD", {
      optional: true,
      secret: true,
      description:
        "Basic-auth password of opencode serve (user opencode); set it whenever the server listens beyond loopback",
    }),
    model: envString("OPENCODE_MODEL", {
      optional: true,
      pattern: /^[^/\s]+\/\S+$/,
      description:
        "Model pinned on every agent session (provider/model); unset: the top-level model of OPENCODE_CONFIG_FILE",
    }),
    configFile: envString("OPENCODE_CONFIG_FILE", {
      optional: true,
      description:
        "opencode config file (JSONC) whose top-level model is the pin when OPENCODE_MODEL is unset",
    }),
  },
  analyst: {
    idleTimeoutMs: envDurationMs("ANALYST_IDLE_TIMEOUT_MS", {
      default: 120_000,
      description: "An analyst run with no progress for this long is interrupted",
    }),
    hardTimeoutMs: envDurationMs("ANALYST_HARD_TIMEOUT_MS", {
      default: 600_000,
      description: "Total time one analyst run may take, repair prompt included",
    }),
    maxQuestions: envInt("ANALYST_MAX_QUESTIONS", {
      default: 3,
      min: 1,
      max: 10,
      description: "Most questions the analyst asks per turn (extra ones are dropped)",
    }),
  },
  workspace: {
    dir: envString("WORKSPACE_DIR", {
      default: join(tmpdir(), "ratatoskr-workspaces"),
      description: "Root of the per-task working directories agent sessions run in",
    }),
  },
  repositories: {
    giteaUrl: envUrl("GITEA_URL", {
      optional: true,
      protocols: ["https", "http"],
      description: "Gitea server (root URL) holding the repositories tasks work on",
    }),
    giteaToken: envString("GITEA_TOKEN", {
      optional: true,
      secret: true,
      description: "Gitea API token of the bot account; required with GITEA_URL",
    }),
    localGitRoot: envString("LOCAL_GIT_ROOT", {
      optional: true,
      description:
        "Directory of bare repositories <owner>/<name>.git standing in for a git host when GITEA_URL is unset (demo mode)",
    }),
  },
};

export type AnalystConfig = ConfigOf<typeof ANALYST_CONFIG_SCHEMA>;

/** Loads the analyst's variables and checks the ones that only make sense together. */
export function loadAnalystConfig(env: Env): AnalystConfig {
  const config = loadConfig(ANALYST_CONFIG_SCHEMA, env);
  const { giteaUrl, giteaToken } = config.repositories;
  if (giteaUrl && !giteaToken) {
    throw new ConfigError([{ name: "GITEA_TOKEN", message: "is required when GITEA_URL is set" }]);
  }
  if (config.analyst.hardTimeoutMs < config.analyst.idleTimeoutMs) {
    throw new ConfigError([
      { name: "ANALYST_HARD_TIMEOUT_MS", message: "must not be shorter than ANALYST_IDLE_TIMEOUT_MS" },
    ]);
  }
  return config;
}
