import { createTestRedis, type TestRedis } from "@ratatoskr/testkit/vitest";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { redisRefusedChats } from "../src/telegram/access/refused-chats.store.ts";

/** A stranger is told "not allowed" once per memory lifetime, however many messages they send. */
let testRedis: TestRedis;
let redis: Redis;

beforeAll(() => {
  testRedis = createTestRedis();
  redis = new Redis(testRedis.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  redis?.disconnect();
  await testRedis?.cleanup();
});

describe("refused chats", () => {
  it("tells a stranger once, and a burst of their messages costs one Redis call, not one each", async () => {
    const refused = redisRefusedChats(redis, testRedis.prefix);
    const set = vi.spyOn(redis, "set");
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push(await refused.firstRefusal(5_001));
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect(answers[0]).toBe(true);
    expect(set).toHaveBeenCalledTimes(1);
    set.mockRestore();
  });

  it("is shared by replicas: another process's store does not tell the chat again", async () => {
    expect(await redisRefusedChats(redis, testRedis.prefix).firstRefusal(5_002)).toBe(true);
    expect(await redisRefusedChats(redis, testRedis.prefix).firstRefusal(5_002)).toBe(false);
  });

  it("tells the chat again once the memory has lapsed, the local one included", async () => {
    const refused = redisRefusedChats(redis, testRedis.prefix, 1);
    expect(await refused.firstRefusal(5_003)).toBe(true);
    expect(await refused.firstRefusal(5_003)).toBe(false);
    await vi.waitFor(async () => expect(await refused.firstRefusal(5_003)).toBe(true), {
      timeout: 5_000,
      interval: 100,
    });
  });
});
