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
export async function waitForRedis(
  redis: Redis,
  settings: RedisSettings,
  wait: StartupWait & { signal?: AbortSignal },
): Promise<void> {
  if (redis.status === "ready") return;
  let lastError = "no answer";
  let refused = false;
  const onError = (err: Error) => {
    lastError = scrubSecrets(err.message || err.name);
    refused ||= REFUSED_CREDENTIALS.test(lastError);
  };
  redis.on("error", onError);
  const address = describeTopology(settings);
  const variables = settings.clusterNodes?.length
    ? "REDIS_URL / REDIS_CLUSTER_NODES"
    : settings.sentinels?.length
      ? "REDIS_SENTINELS"
      : "REDIS_URL";
  const schedule = attempts(wait);
  const startedAt = Date.now();
  try {
    for (;;) {
      // Refused credentials are a configuration error: waiting would not change them.
      if (refused) throw new StartupError(`Redis at ${address} refused the credentials (${lastError}); fix ${variables}`);
      // Called off because the other backend failed: a Redis that never said what is wrong is
      // not reported as a problem of its own (it may simply not have answered yet).
      if (wait.signal?.aborted && lastError === "no answer") {
        // A moment for its first answer, so a Redis that is down is still named with the other.
        if (await readyWithin(redis, CALLED_OFF_GRACE_MS, () => lastError !== "no answer")) return;
        if (lastError === "no answer") throw new WaitCalledOff();
      }
      const step = wait.signal?.aborted ? undefined : schedule.next();
      if (!step) {
        throw new StartupError(
          `Redis at ${address} is unreachable after ${Date.now() - startedAt} ms (${lastError}); start it or fix ${variables}`,
        );
      }
      if (await readyWithin(redis, step.delayMs, () => refused, wait.signal)) {
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

const CALLED_OFF_GRACE_MS = 1_000;

/** The wait ended because another start-up check failed; nothing to report of its own. */
class WaitCalledOff extends Error {
  override readonly name = "WaitCalledOff";
}

/** `WRONGPASS`, `NOAUTH`: Redis answered, and said no to who we are. */
const REFUSED_CREDENTIALS = /WRONGPASS|NOAUTH|invalid password|invalid username-password/i;

/**
 * Resolves true once Redis is ready, false after `ms`. A failed reconnect in between does not end
 * the wait (events.once would reject on the client's 'error': a line per reconnect, not per
 * check), unless it says the credentials are refused or the wait is called off.
 */
function readyWithin(redis: Redis, ms: number, refused: () => boolean, signal?: AbortSignal): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("error", onError);
      signal?.removeEventListener("abort", onAbort);
      resolve(ready);
    };
    const onReady = () => done(true);
    const onError = () => {
      if (refused()) done(false);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    redis.on("ready", onReady);
    redis.on("error", onError);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The database answers, exists and carries every committed migration: checked once before the
 * services start (an unreachable server is waited for with backoff and a log line per attempt,
 * up to `timeoutMs`, 0: as long as it takes) and by every readiness probe.
 */
export async function checkDatabase(
  db: Database,
  connectionString: string,
  wait: StartupWait & { signal?: AbortSignal },
): Promise<() => Promise<void>> {
  const check = createMigrationCheck({ pool: db.pool, connectionString, schema: db.schema });
  const schedule = attempts(wait);
  for (;;) {
    try {
      await check();
      return check;
    } catch (error) {
      const unreachable = error instanceof DatabaseNotReadyError && error.reason === "unreachable";
      const step = unreachable && !wait.signal?.aborted ? schedule.next() : undefined;
      if (!step) throw error instanceof DatabaseNotReadyError ? new StartupError(error.message) : error;
      wait.logger.warn(
        { attempt: step.attempt, error: scrubSecrets((error as Error).message), nextCheckInMs: step.delayMs },
        "waiting for postgres",
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, step.delayMs);
        wait.signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
}

/**
 * Waits for Redis and Postgres side by side and reports every problem at once: a problem that
 * waiting cannot fix (refused credentials, a missing database, missing migrations) ends the wait
 * for the other too, whose state then is reported with it. Returns the database's readiness check.
 */
export async function waitForBackends(
  redis: { connection: Redis; settings: RedisSettings },
  database: { db: Database; connectionString: string },
  wait: StartupWait,
): Promise<() => Promise<void>> {
  const giveUp = new AbortController();
  const stopOthers = <T>(attempt: Promise<T>) =>
    attempt.catch((error: unknown) => {
      giveUp.abort();
      throw error;
    });
  const [redisOutcome, databaseOutcome] = await Promise.allSettled([
    stopOthers(waitForRedis(redis.connection, redis.settings, { ...wait, signal: giveUp.signal })),
    stopOthers(checkDatabase(database.db, database.connectionString, { ...wait, signal: giveUp.signal })),
  ]);
  const failures = [redisOutcome, databaseOutcome]
    .flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []))
    .filter((f) => !(f instanceof WaitCalledOff));
  if (failures.length === 0) return (databaseOutcome as PromiseFulfilledResult<() => Promise<void>>).value;
  const bug = failures.find((f) => !(f instanceof StartupError));
  if (bug) throw bug;
  if (failures.length === 1) throw failures[0];
  throw new StartupError(failures.map((f) => `\n- ${(f as Error).message}`).join(""));
}
