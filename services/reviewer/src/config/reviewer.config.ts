import { OPENCODE_CONFIG_SCHEMA } from "@ratatoskr/opencode";
import { envDurationMs, envInt, loadConfig, type ConfigOf, type Env } from "@ratatoskr/runtime";
import { checkRunTimeouts, GIT_HOST_CONFIG_SCHEMA, STEP_SWEEP_CONFIG_SCHEMA } from "@ratatoskr/pipeline";

export const REVIEWER_CONFIG_SCHEMA = {
  opencode: OPENCODE_CONFIG_SCHEMA,
  git: GIT_HOST_CONFIG_SCHEMA,
  sweep: STEP_SWEEP_CONFIG_SCHEMA,
  reviewer: {
    idleTimeoutMs: envDurationMs("REVIEWER_IDLE_TIMEOUT_MS", {
      default: 180_000,
      description: "A review with no progress for this long is interrupted (the task fails, saying so)",
    }),
    hardTimeoutMs: envDurationMs("REVIEWER_HARD_TIMEOUT_MS", {
      default: 900_000,
      description: "Total time one review may take, repair prompt and retry included",
    }),
    maxDiffChars: envInt("REVIEWER_MAX_DIFF_CHARS", {
      default: 200_000,
      min: 1_000,
      description: "Longest branch diff put in the reviewer's prompt; a longer one is cut and the reviewer told so",
    }),
    statusPollMs: envDurationMs("REVIEWER_STATUS_POLL_MS", {
      default: 1_000,
      description: "How often a running review re-reads its task, so /cancel interrupts it within seconds",
    }),
  },
};

export type ReviewerConfig = ConfigOf<typeof REVIEWER_CONFIG_SCHEMA>;

export function loadReviewerConfig(env: Env): ReviewerConfig {
  const config = loadConfig(REVIEWER_CONFIG_SCHEMA, env);
  checkRunTimeouts(config.reviewer, "REVIEWER");
  return config;
}
