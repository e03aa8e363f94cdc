import { OPENCODE_CONFIG_SCHEMA } from "@ratatoskr/opencode";
import { envDurationMs, loadConfig, type ConfigOf, type Env } from "@ratatoskr/runtime";
import { checkRunTimeouts, GIT_HOST_CONFIG_SCHEMA, STEP_SWEEP_CONFIG_SCHEMA } from "@ratatoskr/pipeline";

export const DEV_CONFIG_SCHEMA = {
  opencode: OPENCODE_CONFIG_SCHEMA,
  git: GIT_HOST_CONFIG_SCHEMA,
  sweep: STEP_SWEEP_CONFIG_SCHEMA,
  dev: {
    idleTimeoutMs: envDurationMs("DEV_IDLE_TIMEOUT_MS", {
      default: 300_000,
      description:
        "A dev run with no progress for this long stops: its work is pushed and the task becomes timeout (/continue N, or /agent continue on Gitea, resumes it)",
    }),
    hardTimeoutMs: envDurationMs("DEV_HARD_TIMEOUT_MS", {
      default: 1_800_000,
      description: "Total time one dev run may take before it stops like an idle one",
    }),
    statusPollMs: envDurationMs("DEV_STATUS_POLL_MS", {
      default: 1_000,
      description: "How often a running dev job re-reads its task, so /cancel interrupts the agent within seconds",
    }),
  },
};

export type DevConfig = ConfigOf<typeof DEV_CONFIG_SCHEMA>;

export function loadDevConfig(env: Env): DevConfig {
  const config = loadConfig(DEV_CONFIG_SCHEMA, env);
  checkRunTimeouts(config.dev, "DEV");
  return config;
}
