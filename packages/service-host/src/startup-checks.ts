import { once } from "node:events";
import { createMigrationCheck, DatabaseNotReadyError, type Database } from "@ratatoskr/db";
import { describeTopology, scrubSecrets, StartupError, type Redis, type RedisSettings } from "@ratatoskr/runtime";

/**
 * Waits for the first Redis connection; after `timeoutMs` start-up stops with one line naming
 * Redis, its address and the last connection error.
 */
export async function waitForRedis(redis: Redis, settings: RedisSettings, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return;
  let lastError = "no answer";
  const onError = (err: Error) => {
    lastError = scrubSecrets(err.message || err.name);
  };
  redis.on("error", onError);
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  try {
    await once(redis, "ready", { signal: timer.signal });
  } catch {
    throw new StartupError(
      `Redis at ${describeTopology(settings)} is unreachable after ${timeoutMs} ms (${lastError}); start it or fix ${settings.clusterNodes?.length ? "REDIS_URL / REDIS_CLUSTER_NODES" : settings.sentinels?.length ? "REDIS_SENTINELS" : "REDIS_URL"}`,
    );
  } finally {
    clearTimeout(timeout);
    redis.off("error", onError);
  }
}

/**
 * The database answers, exists and carries every committed migration: checked once before the
 * services start (an unreachable server is retried until `timeoutMs`) and by every readiness probe.
 */
export async function checkDatabase(
  db: Database,
  connectionString: string,
  timeoutMs: number,
): Promise<() => Promise<void>> {
  const check = createMigrationCheck({ pool: db.pool, connectionString, schema: db.schema });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return check;
    } catch (error) {
      const retry =
        error instanceof DatabaseNotReadyError && error.reason === "unreachable" && Date.now() < deadline;
      if (!retry) throw error instanceof DatabaseNotReadyError ? new StartupError(error.message) : error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
