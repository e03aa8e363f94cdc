import {
  baseConfigSchema,
  envDurationMs,
  envInt,
  type ConfigOf,
  type ConfigSchema,
  type EnvVar,
} from "@ratatoskr/runtime";
import type { AnyServiceDefinition } from "./service-definition.ts";

export const reconcilerConfig = {
  reconciler: {
    intervalMs: envDurationMs("RECONCILER_INTERVAL_MS", {
      default: 5_000,
      description: "How often each process re-enqueues follow-ups whose enqueue a crash lost",
    }),
    olderThanMs: envDurationMs("RECONCILER_GRACE_MS", {
      // Short: an enqueue is idempotent (deterministic job id), so re-enqueueing one that was only
      // slow is harmless; a long grace is what a killed process's next task waits for.
      default: 5_000,
      description: "A follow-up is only considered lost after this long undispatched",
    }),
  },
};

export const startupConfig = {
  startup: {
    timeoutMs: envDurationMs("STARTUP_TIMEOUT_MS", {
      default: 0,
      description:
        "Start-up waits this long for Redis and Postgres (backoff, a line per attempt), then stops; 0: no limit",
    }),
  },
};

/** Base settings plus `<NAME>_CONCURRENCY` for each service this process runs. */
export function hostConfigSchema(services: readonly AnyServiceDefinition[]) {
  const concurrency: Record<string, EnvVar<number>> = {};
  for (const service of services) {
    concurrency[service.name] = envInt(`${service.name.toUpperCase()}_CONCURRENCY`, {
      default: service.defaultConcurrency,
      min: 0,
      description: `Parallel ${service.name} jobs per process; 0 takes no jobs here (e.g. an HTTP-only replica)`,
    });
  }
  return { ...baseConfigSchema, ...reconcilerConfig, ...startupConfig, concurrency };
}

export type HostConfig = ConfigOf<ReturnType<typeof hostConfigSchema>>;

/** Every variable a host of these services reads: base, host and each service's own. */
export function fullConfigSchema(services: readonly AnyServiceDefinition[]): ConfigSchema {
  const own: Record<string, ConfigSchema> = {};
  for (const service of services) if (service.configSchema) own[service.name] = service.configSchema;
  return { ...hostConfigSchema(services), services: own };
}
