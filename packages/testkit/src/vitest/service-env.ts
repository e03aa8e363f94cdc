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
