import { afterEach, describe, expect, it } from "vitest";
import { createRedisConnection, type Redis } from "../src/index.ts";
import { captureLogger, testRedisUrl } from "./support/test-env.ts";
import { waitFor } from "./support/wait-for.ts";

/** Nothing listens here, so connecting fails at once. */
const DEAD_REDIS_URL = "redis://:dead-pass@127.0.0.1:1";

describe("createRedisConnection", () => {
  const opened: Redis[] = [];
  afterEach(() => {
    for (const connection of opened.splice(0)) connection.disconnect();
  });

  it("gives workers commands that wait through reconnects (maxRetriesPerRequest: null)", async () => {
    const { logger } = captureLogger();
    const connection = createRedisConnection(testRedisUrl(), "worker", {
      logger,
      connectionName: "test-worker",
    });
    opened.push(connection);
    expect(connection.options.maxRetriesPerRequest).toBeNull();
    expect(connection.options.enableOfflineQueue).toBe(true);
    await expect(connection.ping()).resolves.toBe("PONG");
    await expect(connection.client("GETNAME")).resolves.toBe("test-worker");
  });

  it("makes producers fail fast while Redis is unreachable, and logs the error without its password", async () => {
    const captured = captureLogger();
    const connection = createRedisConnection(DEAD_REDIS_URL, "producer", { logger: captured.logger });
    opened.push(connection);
    expect(connection.options.enableOfflineQueue).toBe(false);

    const started = Date.now();
    await expect(connection.ping()).rejects.toThrow(/enableOfflineQueue/);
    expect(Date.now() - started).toBeLessThan(1_000);

    await waitFor(
      () => captured.lines().some((l) => l.msg === "redis unreachable; retrying" && l.role === "producer"),
      {
        what: "the error listener to log",
      },
    );
    expect(captured.text()).not.toContain("dead-pass");
  });

  it("logs an outage once, not once per failed reconnect", async () => {
    const captured = captureLogger();
    const connection = createRedisConnection(DEAD_REDIS_URL, "worker", {
      logger: captured.logger,
      redisOptions: { retryStrategy: () => 20 },
    });
    opened.push(connection);
    const errors: unknown[] = [];
    connection.on("error", (err) => errors.push(err));
    await waitFor(() => errors.length >= 20, { what: "twenty failed reconnects" });
    const redisLines = captured.lines().filter((l) => l.component === "redis");
    expect(redisLines.map((l) => l.msg)).toEqual(["redis unreachable; retrying"]);
  });
});
