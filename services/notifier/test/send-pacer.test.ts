import { createTestRedis, type TestRedis } from "@ratatoskr/runtime/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSendPacer, SlotDeferredError } from "../src/delivery/send-pacer.ts";

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

/** The most slot times that fall in any window of `windowMs` (half-open). */
function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("send pacer", () => {
  it("moves a slot whose send left late to the send's time, so late sends never bunch up with the next second's", async () => {
    const rate = 2;
    const pacer = createSendPacer({ redis, prefix: `${t.prefix}:late`, globalPerSecond: rate, chatIntervalMs: 1 });
    const signal = new AbortController().signal;
    const sends: number[] = [];
    const send = async (slot: Awaited<ReturnType<typeof pacer.takeSlot>>) => {
      await pacer.confirmSlot(slot, signal);
      sends.push(Date.now());
    };
    const late = await pacer.takeSlot(1, signal);
    await send(await pacer.takeSlot(2, signal));
    // The first slot's send is held up (a slow claim and render on a loaded machine).
    await sleep(900);
    await send(late);
    // The slots' original second has passed: two more chats want to send at once.
    await sleep(200);
    await Promise.all([3, 4].map(async (chat) => send(await pacer.takeSlot(chat, signal))));

    expect(sends).toHaveLength(4);
    expect(busiestWindow(sends, 1_000)).toBeLessThanOrEqual(rate);
  });

  it("never lets more than the overall rate into any sliding second, across replicas and chats", async () => {
    const rate = 8;
    // Two replicas sharing Redis, as two notifier processes would.
    const replicas = [0, 1].map(() =>
      createSendPacer({ redis, prefix: `${t.prefix}:a`, globalPerSecond: rate, chatIntervalMs: 1 }),
    );
    const times: number[] = [];
    const until = Date.now() + 2_600;
    const signal = new AbortController().signal;
    let chat = 0;
    // Many chats wanting to send at once: only the overall rate holds them back.
    await Promise.all(
      Array.from({ length: 24 }, async (_, lane) => {
        const pacer = replicas[lane % 2]!;
        while (Date.now() < until) {
          await pacer.takeSlot(1_000 + (chat++ % 500), signal);
          times.push(Date.now());
        }
      }),
    );

    expect(busiestWindow(times, 1_000)).toBeLessThanOrEqual(rate);
    // And it is a pace, not a stall: close to the rate over the run.
    expect(times.length).toBeGreaterThanOrEqual(rate * 2);
  });

  it("keeps a chat interval between two slots of one chat and defers a long hold", async () => {
    const pacer = createSendPacer({
      redis,
      prefix: `${t.prefix}:b`,
      globalPerSecond: 100,
      chatIntervalMs: 300,
    });
    const signal = new AbortController().signal;
    const first = Date.now();
    await pacer.takeSlot(7, signal);
    await pacer.takeSlot(7, signal);
    expect(Date.now() - first).toBeGreaterThanOrEqual(300 - 20);

    await pacer.holdChat(7, 5_000);
    const deferred = await pacer.takeSlot(7, signal).catch((error: unknown) => error);
    expect(deferred).toBeInstanceOf(SlotDeferredError);
    expect((deferred as SlotDeferredError).waitMs).toBeGreaterThan(4_000);
    // A shorter hold never cuts a longer one short.
    await pacer.sent(7, 1);
    expect(await pacer.takeSlot(7, signal).catch((error: unknown) => error)).toBeInstanceOf(
      SlotDeferredError,
    );
    // Another chat is not held.
    await pacer.takeSlot(8, signal);
  });
});
