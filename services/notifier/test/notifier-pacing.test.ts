import type { Notification } from "@ratatoskr/db";
import type { SentRecord } from "@ratatoskr/testkit";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { NotifierHarness, WAIT } from "./support/notifier-harness.ts";

/** The per-chat gap under test (the default NOTIFIER_CHAT_INTERVAL_MS). */
const CHAT_INTERVAL_MS = 1_000;
/** Timers and Redis expiry may run a few ms early relative to another clock; never much. */
const CLOCK_SLACK_MS = 50;

let h: NotifierHarness;

beforeAll(async () => {
  h = await NotifierHarness.start();
});
afterAll(async () => {
  await h.stop();
});

const texts = (records: SentRecord[]) => records.map((r) => r.plainText);

describe("notifier: order and pacing", () => {
  it("delivers one chat's messages in creation order, a chat interval apart, without holding up another chat", async () => {
    const [busy, other] = [2_001, 2_002];
    h.fake.addChat(busy);
    h.fake.addChat(other);
    const created: Notification[] = [];
    for (let n = 1; n <= 5; n++)
      created.push(await h.message(busy, "bot.unknown-command", { command: `/n${n}` }));
    const elsewhere = await h.message(other, "bot.unknown-command", { command: "/other" });
    // Jobs in reverse: whichever job runs first, the chat still gets them oldest first.
    for (const notification of [...created].reverse()) await h.enqueue(notification.id);
    await h.enqueue(elsewhere.id);

    const sent = await h.fake.waitForMessages(busy, 5, { timeoutMs: WAIT.timeout });
    expect(texts(sent).map((t) => /\/n\d/.exec(t)?.[0])).toEqual(["/n1", "/n2", "/n3", "/n4", "/n5"]);
    const gaps = sent.slice(1).map((r, i) => r.time - (sent[i] as SentRecord).time);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(CHAT_INTERVAL_MS - CLOCK_SLACK_MS);
    const [otherMessage] = h.fake.sent(other);
    expect(otherMessage?.plainText).toContain("/other");
    expect(otherMessage?.time).toBeLessThan((sent[1] as SentRecord).time);
  });

  it("honours 429 retry_after: the chat waits, then gets every message once and in order", async () => {
    const chatId = 2_003;
    h.fake.addChat(chatId);
    h.fake.failNext("sendMessage", { error_code: 429, retry_after: 1 });
    const created: Notification[] = [];
    for (let n = 1; n <= 3; n++)
      created.push(await h.message(chatId, "bot.unknown-command", { command: `/r${n}` }));
    for (const notification of created) await h.enqueue(notification.id);

    const sent = await h.fake.waitForMessages(chatId, 3, { timeoutMs: WAIT.timeout });
    expect(texts(sent).map((t) => /\/r\d/.exec(t)?.[0])).toEqual(["/r1", "/r2", "/r3"]);
    const requests = h.sendRequests(chatId);
    expect(requests).toHaveLength(4);
    const refusedAt = (requests[0] as { time: number }).time;
    expect((sent[0] as SentRecord).time - refusedAt).toBeGreaterThanOrEqual(1_000 - CLOCK_SLACK_MS);
    await vi.waitFor(async () => {
      for (const notification of created)
        expect(await h.notification(notification.id)).toMatchObject({ status: "sent" });
    }, WAIT);
  });

  it("counts every part of a long text against the chat's pace", async () => {
    const chatId = 2_005;
    h.fake.addChat(chatId);
    const lines = Array.from({ length: 50 }, (_, i) => `line ${i} ${"y".repeat(180)}`);
    const long = await h.message(chatId, "task.failed", { taskId: 1, reason: lines.join("\n") });
    const next = await h.message(chatId, "bot.unknown-command", { command: "/after" });
    await h.enqueue(long.id);
    await h.enqueue(next.id);

    const sent = await h.fake.waitForMessages(chatId, (r) => r.plainText.includes("/after"), {
      timeoutMs: WAIT.timeout,
    });
    const parts = sent.length - 1;
    expect(parts).toBeGreaterThanOrEqual(3);
    const lastPart = sent[parts - 1] as SentRecord;
    // As if each part had had its own slot: the next message waits one interval per part.
    expect((sent[parts] as SentRecord).time - lastPart.time).toBeGreaterThanOrEqual(
      parts * CHAT_INTERVAL_MS - CLOCK_SLACK_MS,
    );
  });
});

describe("notifier: the bot's overall rate", () => {
  it("never puts more than the configured rate into any sliding second as Telegram sees it, across replicas", async () => {
    const rate = 10;
    const env = { NOTIFIER_GLOBAL_PER_SECOND: String(rate) };
    const first = await NotifierHarness.start({ env });
    const second = await NotifierHarness.start({ env, joining: first });
    try {
      const chats = Array.from({ length: 4 * rate }, (_, i) => 2_100 + i);
      for (const chatId of chats) first.fake.addChat(chatId);
      const stored = [];
      for (const chatId of chats) stored.push(await first.message(chatId, "bot.help", {}));
      // The fake stamps each request when this process's event loop gets to it, and the notifiers
      // run on the same loop: a stall of the loop (a loaded CI machine) delays sends and stamps
      // alike and can put sends paced 100 ms apart within the stall of each other. The windows
      // checked are shortened by the longest stall seen, nothing more (and never below 200 ms, where
      // 10 messages still cannot fit unpaced).
      const stalls = monitorEventLoopDelay({ resolution: 10 });
      stalls.enable();
      for (const notification of stored) await first.enqueue(notification.id);

      await vi.waitFor(
        () => expect(chats.every((chatId) => first.fake.sent(chatId).length === 1)).toBe(true),
        {
          timeout: 30_000,
          interval: 50,
        },
      );
      stalls.disable();
      const window = Math.max(200, 1_000 - Math.ceil(stalls.max / 1e6));
      const times = chats
        .map((chatId) => (first.fake.sent(chatId)[0] as SentRecord).time)
        .sort((a, b) => a - b);
      let busiest = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while ((times[i] as number) - (times[j] as number) >= window) j++;
        busiest = Math.max(busiest, i - j + 1);
      }
      expect(busiest).toBeLessThanOrEqual(rate);
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
