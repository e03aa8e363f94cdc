import { createDatabase } from "@ratatoskr/db";
import { createLogger, createRedisConnection, loadConfig, redisConfig, StartupError } from "@ratatoskr/runtime";
import { describe, expect, it } from "vitest";
import { waitForBackends, waitForRedis } from "../src/startup-checks.ts";

/** Start-up waits as it says, and says every problem at once (issue 21.8). */
const logger = createLogger({ service: "startup-test", level: "silent" });
const settings = (url: string) => loadConfig(redisConfig, { REDIS_URL: url }).redis;

function recorder() {
  const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const at = (fields: object, msg: string) => void lines.push({ msg, fields: fields as Record<string, unknown> });
  return { lines, logger: { warn: at, info: at } as never };
}

describe("start-up waits", () => {
  it("checks an absent Redis as often as each line says: every reconnect error is not a check", async () => {
    const { lines, logger: wait } = recorder();
    const redis = createRedisConnection(settings("redis://127.0.0.1:1"), "producer", { logger });
    try {
      const startedAt = Date.now();
      await expect(waitForRedis(redis, settings("redis://127.0.0.1:1"), { timeoutMs: 3_500, logger: wait })).rejects.toThrow(
        /Redis at 127\.0\.0\.1:1 is unreachable after \d+ ms .*start it or fix REDIS_URL/,
      );
      const waits = lines.filter((l) => l.msg === "waiting for redis");
      // 0.5 s, 1 s, 2 s: three pauses fit, each announced once (before: a line per reconnect).
      expect(waits.length).toBeLessThanOrEqual(4);
      // The last pause is cut to what is left of the limit.
      expect(waits.map((l) => l.fields.nextCheckInMs).slice(0, 2)).toEqual([500, 1_000]);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(3_000);
    } finally {
      redis.disconnect();
    }
  });

  it("names Redis and Postgres together, and does not wait on credentials Postgres refused", async () => {
    const redis = createRedisConnection(settings("redis://127.0.0.1:1"), "producer", { logger });
    const url = "postgresql://no_such_role@127.0.0.1:5432/test";
    const db = createDatabase({ connectionString: url, schema: "public" });
    try {
      const startedAt = Date.now();
      // No start-up limit: only a problem that waiting cannot fix ends it.
      const failure = await waitForBackends(
        { connection: redis, settings: settings("redis://127.0.0.1:1") },
        { db, connectionString: url },
        { timeoutMs: 0, logger: recorder().logger },
      ).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(StartupError);
      const message = (failure as Error).message;
      expect(message).toMatch(/Postgres at 127\.0\.0\.1:5432\/test refused the credentials .*fix the user or password in DATABASE_URL/);
      expect(message).toMatch(/Redis at 127\.0\.0\.1:1 is unreachable/);
      expect(Date.now() - startedAt).toBeLessThan(10_000);
    } finally {
      redis.disconnect();
      await db.close();
    }
  });
});
