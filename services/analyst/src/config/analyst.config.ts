import { ConfigError, envDurationMs, envInt, loadConfig, type ConfigOf, type Env } from "@ratatoskr/runtime";
import { OPENCODE_CONFIG_SCHEMA } from "@ratatoskr/opencode";
import { checkRunTimeouts, GITEA_TOKEN_VAR, GITEA_URL_VAR, LOCAL_GIT_ROOT_VAR, WORKSPACE_DIR_VAR } from "@ratatoskr/pipeline";

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
  workspace: { dir: WORKSPACE_DIR_VAR },
  repositories: { giteaUrl: GITEA_URL_VAR, giteaToken: GITEA_TOKEN_VAR, localGitRoot: LOCAL_GIT_ROOT_VAR },
};

export type AnalystConfig = ConfigOf<typeof ANALYST_CONFIG_SCHEMA>;

/** Loads the analyst's variables and checks the ones that only make sense together. */
export function loadAnalystConfig(env: Env): AnalystConfig {
  const config = loadConfig(ANALYST_CONFIG_SCHEMA, env);
  const { giteaUrl, giteaToken } = config.repositories;
  if (giteaUrl && !giteaToken) {
    throw new ConfigError([{ name: "GITEA_TOKEN", message: "is required when GITEA_URL is set" }]);
  }
  checkRunTimeouts(config.analyst, "ANALYST");
  return config;
}
