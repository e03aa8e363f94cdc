import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";
import { createLogger, type Logger } from "../../src/index.ts";

export function testRedisUrl(): string {
  return inject("redisUrl");
}

/** A key prefix of its own for each test file, so files run in parallel against one Redis. */
export function uniquePrefix(): string {
  return `test-${randomUUID()}`;
}

/** Deletes every key under `prefix` (BullMQ keys are `<prefix>:<queue>:…`). */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

export interface CapturedLogger {
  logger: Logger;
  /** Raw JSON lines written so far. */
  text(): string;
  lines(): Array<Record<string, unknown>>;
}

/** A real runtime logger writing into memory instead of stdout. */
export function captureLogger(service = "test", level: "info" | "debug" | "warn" = "debug"): CapturedLogger {
  const chunks: string[] = [];
  const logger = createLogger({
    service,
    level,
    destination: { write: (line: string) => void chunks.push(line) },
  });
  return {
    logger,
    text: () => chunks.join(""),
    lines: () =>
      chunks
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
