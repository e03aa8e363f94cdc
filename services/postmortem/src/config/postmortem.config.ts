import { OPENCODE_CONFIG_SCHEMA } from "@ratatoskr/opencode";
import { STEP_SWEEP_CONFIG_SCHEMA, WORKSPACE_DIR_VAR } from "@ratatoskr/pipeline";
import { envDurationMs, envInt, loadConfig, type ConfigOf, type Env } from "@ratatoskr/runtime";

export const POSTMORTEM_CONFIG_SCHEMA = {
  opencode: OPENCODE_CONFIG_SCHEMA,
  sweep: STEP_SWEEP_CONFIG_SCHEMA,
  postmortem: {
    traceBudgetChars: envInt("POSTMORTEM_TRACE_BUDGET_CHARS", {
      default: 24_000,
      min: 2_000,
      max: 400_000,
      description: "Characters of agent prompts and outputs the postmortem agent reads (the latest runs get the most)",
    }),
    idleTimeoutMs: envDurationMs("POSTMORTEM_IDLE_TIMEOUT_MS", {
      default: 120_000,
      description: "A postmortem run with no progress for this long is interrupted",
    }),
    hardTimeoutMs: envDurationMs("POSTMORTEM_HARD_TIMEOUT_MS", {
      default: 300_000,
      description: "Total time one postmortem run may take, repair prompt included",
    }),
  },
  workspace: { dir: WORKSPACE_DIR_VAR },
};

export type PostmortemConfig = ConfigOf<typeof POSTMORTEM_CONFIG_SCHEMA>;

export function loadPostmortemConfig(env: Env = process.env): PostmortemConfig {
  return loadConfig(POSTMORTEM_CONFIG_SCHEMA, env);
}
