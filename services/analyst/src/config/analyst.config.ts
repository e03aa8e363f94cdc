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
import { OPENCODE_CONFIG_SCHEMA } from "@ratatoskr/opencode";

export const ANALYST_CONFIG_SCHEMA = {
  opencode: OPENCODE_CONFIG_SCHEMA,
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
  sweep: {
    intervalMs: envDurationMs("ANALYST_SWEEP_INTERVAL_MS", {
      default: 10_000,
      description: "How often waiting analyses are checked against their jobs (Redis lost, stalled out)",
    }),
    graceMs: envDurationMs("ANALYST_SWEEP_GRACE_MS", {
      default: 30_000,
      description: "An analysis job younger than this is not judged missing or dead by the sweep",
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
