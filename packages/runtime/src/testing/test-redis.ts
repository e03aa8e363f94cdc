import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";

export interface TestRedis {
  url: string;
  /** Key prefix for this file's queues (BullMQ `prefix` option). */
  prefix: string;
  /** Deletes every key under the prefix. */
  cleanup(): Promise<void>;
}

/** A fresh BullMQ prefix, so files sharing one Redis never see each other's jobs. */
export function testRedisPrefix(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  try {
    let deleted = 0;
    const stream = redis.scanStream({ match: `${prefix}:*`, count: 500 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    }
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** Redis URL plus a prefix of this file's own: `createTestRedis()` in beforeAll, `cleanup()` in afterAll. */
export function createTestRedis(url: string = inject("redisUrl")): TestRedis {
  const prefix = testRedisPrefix();
  return {
    url,
    prefix,
    cleanup: async () => {
      await deleteKeysWithPrefix(url, prefix);
    },
  };
}
