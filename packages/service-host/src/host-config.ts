import {
  baseConfigSchema,
  DEFAULT_LOCK_DURATION_MS,
  DEFAULT_STALLED_INTERVAL_MS,
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

export const jobLockConfig = {
  jobs: {
    lockMs: envInt("JOB_LOCK_MS", {
      default: DEFAULT_LOCK_DURATION_MS,
      min: 1_000,
      description:
        "A running job's lock, renewed every half of it: a killed process's job is taken up again once it expires",
    }),
    stalledCheckMs: envInt("JOB_STALLED_CHECK_MS", {
      default: DEFAULT_STALLED_INTERVAL_MS,
      min: 100,
      description: "How often each process looks for jobs whose lock expired (their process died)",
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
  return { ...baseConfigSchema, ...reconcilerConfig, ...startupConfig, ...jobLockConfig, concurrency };
}

export type HostConfig = ConfigOf<ReturnType<typeof hostConfigSchema>>;

/** Every variable a host of these services reads: base, host and each service's own. */
export function fullConfigSchema(services: readonly AnyServiceDefinition[]): ConfigSchema {
  const own: Record<string, ConfigSchema> = {};
  for (const service of services) if (service.configSchema) own[service.name] = service.configSchema;
  return { ...hostConfigSchema(services), services: own };
}
