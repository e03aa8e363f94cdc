import { ConfigError } from "@ratatoskr/runtime";

/** An agent run's hard limit must not be shorter than its idle one (`<prefix>_HARD_TIMEOUT_MS`, `<prefix>_IDLE_TIMEOUT_MS`). */
export function checkRunTimeouts(timeouts: { idleTimeoutMs: number; hardTimeoutMs: number }, prefix: string): void {
  if (timeouts.hardTimeoutMs < timeouts.idleTimeoutMs) {
    throw new ConfigError([{ name: `${prefix}_HARD_TIMEOUT_MS`, message: `must not be shorter than ${prefix}_IDLE_TIMEOUT_MS` }]);
  }
}
