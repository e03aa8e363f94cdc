import { once } from "node:events";
import { createMigrationCheck, DatabaseNotReadyError, type Database } from "@ratatoskr/db";
import {
  describeTopology,
  scrubSecrets,
  StartupError,
  type Logger,
  type Redis,
  type RedisSettings,
} from "@ratatoskr/runtime";

/** Waits between start-up attempts: 0.5 s doubling up to 5 s. */
export const STARTUP_BACKOFF = { firstMs: 500, maxMs: 5_000 } as const;

export interface StartupWait {
  /** 0: wait for as long as it takes. */
  timeoutMs: number;
  logger: Pick<Logger, "warn" | "info">;
  backoff?: { firstMs: number; maxMs: number };
}

/** Deadline helpers shared by both waits: the next pause, and whether another attempt fits. */
function attempts(wait: StartupWait) {
  const { firstMs, maxMs } = wait.backoff ?? STARTUP_BACKOFF;
  const deadline = wait.timeoutMs > 0 ? Date.now() + wait.timeoutMs : Infinity;
  let attempt = 0;
  return {
    next(): { attempt: number; delayMs: number } | undefined {
      attempt += 1;
      const delayMs = Math.min(firstMs * 2 ** (attempt - 1), maxMs);
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      return { attempt, delayMs: Math.min(delayMs, left) };
    },
  };
}

/**
 * Waits for the first Redis connection, with backoff and one log line per attempt, for as long
 * as `timeoutMs` allows (0: as long as it takes); past it start-up stops with one line naming
 * Redis, its address and the last connection error.
 */
export async function waitForRedis(redis: Redis, settings: RedisSettings, wait: StartupWait): Promise<void> {
  if (redis.status === "ready") return;
  let lastError = "no answer";
  const onError = (err: Error) => {
    lastError = scrubSecrets(err.message || err.name);
  };
  redis.on("error", onError);
  const address = describeTopology(settings);
  const variables = settings.clusterNodes?.length
    ? "REDIS_URL / REDIS_CLUSTER_NODES"
    : settings.sentinels?.length
      ? "REDIS_SENTINELS"
      : "REDIS_URL";
  const schedule = attempts(wait);
  try {
    for (;;) {
      const step = schedule.next();
      if (!step) {
        throw new StartupError(
          `Redis at ${address} is unreachable after ${wait.timeoutMs} ms (${lastError}); start it or fix ${variables}`,
        );
      }
      if (await readyWithin(redis, step.delayMs)) {
        if (step.attempt > 1) wait.logger.info({ redis: address, attempts: step.attempt }, "redis reachable; starting");
        return;
      }
      wait.logger.warn(
        { redis: address, attempt: step.attempt, error: lastError, nextCheckInMs: step.delayMs },
        "waiting for redis",
      );
    }
  } finally {
    redis.off("error", onError);
  }
}

async function readyWithin(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === "ready") return true;
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), ms);
  try {
    await once(redis, "ready", { signal: timer.signal });
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timeout);
  }
}

/**
 * The database answers, exists and carries every committed migration: checked once before the
 * services start (an unreachable server is waited for with backoff and a log line per attempt,
 * up to `timeoutMs`, 0: as long as it takes) and by every readiness probe.
 */
export async function checkDatabase(
  db: Database,
  connectionString: string,
  wait: StartupWait,
): Promise<() => Promise<void>> {
  const check = createMigrationCheck({ pool: db.pool, connectionString, schema: db.schema });
  const schedule = attempts(wait);
  for (;;) {
    try {
      await check();
      return check;
    } catch (error) {
      const unreachable = error instanceof DatabaseNotReadyError && error.reason === "unreachable";
      const step = unreachable ? schedule.next() : undefined;
      if (!step) throw error instanceof DatabaseNotReadyError ? new StartupError(error.message) : error;
      wait.logger.warn(
        { attempt: step.attempt, error: scrubSecrets((error as Error).message), nextCheckInMs: step.delayMs },
        "waiting for postgres",
      );
      await new Promise((resolve) => setTimeout(resolve, step.delayMs));
    }
  }
}
