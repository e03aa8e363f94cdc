import type { TestDatabase } from "@ratatoskr/db/testing";
import type { TestRedis } from "@ratatoskr/runtime/testing";

/**
 * The environment a service host needs in a test: this file's own Postgres schema and Redis
 * prefix, a free loopback port, quiet logs. `extra` adds or overrides variables.
 */
export function serviceTestEnv(
  database: TestDatabase,
  redis: TestRedis,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    REDIS_URL: redis.url,
    DATABASE_URL: database.connectionString,
    DATABASE_SCHEMA: database.schema,
    QUEUE_PREFIX: redis.prefix,
    HTTP_HOST: "127.0.0.1",
    HTTP_PORT: "0",
    // TEST_LOG_LEVEL=debug shows the services' logs when a test needs explaining.
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    ...extra,
  };
}

/**
 * Job locks for service processes a test kills: a killed process's job is taken up again within
 * about 5 + 2 × 1 s, not the default's 15 + 2 × 5 s (which packages/runtime's worker-process test
 * holds to). Renewed every 2.5 s, the lock still outlasts any pause of a live, busy process.
 */
export const QUICK_JOB_LOCKS = { JOB_LOCK_MS: "5000", JOB_STALLED_CHECK_MS: "1000" } as const;

/**
 * A service as its own process in a test (`startServiceProcess`): this file's Postgres schema and
 * Redis prefix, info logs (the process's output explains a failure), a quick shutdown and no Bull
 * Board. `extra` adds or overrides variables.
 */
export function serviceProcessEnv(
  database: TestDatabase,
  redis: TestRedis,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: redis.url,
    DATABASE_URL: database.connectionString,
    DATABASE_SCHEMA: database.schema,
    QUEUE_PREFIX: redis.prefix,
    LOG_LEVEL: "info",
    SHUTDOWN_TIMEOUT_MS: "5000",
    BULL_BOARD_DISABLED: "true",
    ...QUICK_JOB_LOCKS,
    ...extra,
  };
}

/** The opencode serve the agents run in during a test, with the scripted model pinned on every session. */
export function agentOpencodeEnv(
  opencode: { url: string; password: string },
  model: { modelId: string },
): NodeJS.ProcessEnv {
  return {
    OPENCODE_URL: opencode.url,
    OPENCODE_SERVER_PASSWORD: opencode.password,
    OPENCODE_MODEL: `fake/${model.modelId}`,
  };
}
