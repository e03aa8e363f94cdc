import { createTestRedis, type TestRedis } from "@ratatoskr/runtime/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatLocks } from "../src/delivery/chat-lock.ts";
import { createSendPacer } from "../src/delivery/send-pacer.ts";

let t: TestRedis;
let redis: Redis;

beforeAll(() => {
  t = createTestRedis();
  redis = new Redis(t.url);
});
afterAll(async () => {
  redis.disconnect();
  await t.cleanup();
});

function locks(prefix: string): ChatLocks {
  const pacer = createSendPacer({ redis, prefix, globalPerSecond: 1_000, chatIntervalMs: 1_000 });
  return new ChatLocks({ redis, prefix, ttlMs: 4_000, pacer: pacer.scriptArgs });
}

describe("chat locks", () => {
  it("frees a released chat with the next acquire's round trip, its last send's hold recorded", async () => {
    const prefix = `${t.prefix}:carry`;
    const chatLocks = locks(prefix);
    const first = await chatLocks.acquire(1);
    expect(first).not.toBeNull();
    first!.noteSent(2);
    let freed = false;
    const released = first!.release().then(() => (freed = true));
    expect(freed).toBe(false);

    const other = await chatLocks.acquire(2);

    expect(other).not.toBeNull();
    // Settled with the acquire's answer, not by the release's own timer.
    await Promise.resolve();
    expect(freed).toBe(true);
    await released;
    expect(await redis.exists(`${prefix}:notifier:chat-lock:1`)).toBe(0);
    // Two parts sent: the chat is held for two chat intervals from the release.
    expect(await redis.pttl(`${prefix}:notifier:pace-chat:1`)).toBeGreaterThan(1_000);
    await other!.release();
  });

  it("frees a released chat on its own when no acquire comes, never another holder's", async () => {
    const prefix = `${t.prefix}:alone`;
    const chatLocks = locks(prefix);
    const lease = await chatLocks.acquire(3);
    // The lease expired and someone else took the chat meanwhile.
    await redis.set(`${prefix}:notifier:chat-lock:3`, "someone-else");

    await lease!.release();

    expect(await redis.get(`${prefix}:notifier:chat-lock:3`)).toBe("someone-else");
    await redis.del(`${prefix}:notifier:chat-lock:3`);
    const again = await chatLocks.acquire(3);
    await again!.release();
    expect(await redis.exists(`${prefix}:notifier:chat-lock:3`)).toBe(0);
  });
});
