import { notifyMessagesJobs, type NotifyTarget } from "@ratatoskr/contracts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ChatLocks } from "../src/delivery/chat-lock.ts";
import { NotifierHarness, WAIT } from "./support/notifier-harness.ts";

/**
 * v2 notify jobs (issue 22 item 2): one job delivers the messages of several chats, its fixed
 * costs shared — one lease call, one claim statement — while each chat keeps its order, its
 * pace, its 429 holds, and a chat another sender holds is left to it.
 */
let h: NotifierHarness;
beforeAll(async () => {
  h = await NotifierHarness.start({ env: { NOTIFIER_GLOBAL_PER_SECOND: "1000" } });
});
afterAll(async () => {
  await h.stop();
});

const command = (text: string) => /\/\w+/.exec(text)?.[0];

/** Stores one message per command in `chatId`, oldest first. */
async function store(chatId: number, ...commands: string[]): Promise<NotifyTarget[]> {
  h.fake.addChat(chatId);
  const targets: NotifyTarget[] = [];
  for (const c of commands) {
    const row = await h.message(chatId, "bot.unknown-command", { command: c });
    targets.push({ notificationId: row.id, chatId });
  }
  return targets;
}

async function enqueueV2(targets: NotifyTarget[]): Promise<string> {
  const [job] = notifyMessagesJobs(targets);
  await h.host.context.queues.enqueue(job!);
  return job!.jobId;
}

/** The claim statements run, with the chats each claimed the heads of. */
function watchClaims(): { chats: () => string[][] } {
  const query = vi.spyOn(h.host.context.db.pool, "query");
  return {
    chats: () =>
      query.mock.calls
        .map(([config]) => config as unknown as { name?: string; values?: unknown[] })
        .filter((c) => c.name === "rt-notification-mark-and-claim" && (c.values?.[0] as string[]).length > 0)
        .map((c) => c.values![0] as string[]),
  };
}

describe("notifier: a v2 job over several chats", () => {
  it("takes every chat's lease in one call, claims their heads in one statement, and keeps each chat's order and pace", async () => {
    const chats = Array.from({ length: 10 }, (_, i) => 9_400 + i);
    const targets = [
      ...(await store(chats[0]!, "/a1", "/a2")),
      ...(await Promise.all(chats.slice(1).map((chatId) => store(chatId, `/c${chatId}`)))).flat(),
    ];
    const leases = vi.spyOn(ChatLocks.prototype, "acquireMany");
    const claims = watchClaims();

    const job = await h.finished(await enqueueV2(targets));

    expect(job.returnvalue).toMatchObject({ status: "delivered" });
    expect(Object.values(job.returnvalue.messages)).toEqual(targets.map(() => "sent"));
    expect(leases).toHaveBeenCalledTimes(1);
    expect([...leases.mock.calls[0]![0]].sort()).toEqual(chats);
    // The heads of all ten chats in one statement; the second message of the first chat after it.
    expect(claims.chats()[0]?.sort()).toEqual(chats.map(String).sort());
    expect(claims.chats().slice(1)).toEqual([[String(chats[0])]]);
    const first = h.fake.sent(chats[0]!);
    expect(first.map((m) => command(m.plainText))).toEqual(["/a1", "/a2"]);
    expect(first[1]!.time - first[0]!.time).toBeGreaterThanOrEqual(950);
    for (const chatId of chats.slice(1)) expect(h.fake.sent(chatId).map((m) => command(m.plainText))).toEqual([`/c${chatId}`]);
    vi.restoreAllMocks();
  });

  it("leaves a chat another sender holds to it and comes back for it, without holding up the other chats", async () => {
    const [busyChat, freeChat] = [9_420, 9_421];
    const targets = [...(await store(busyChat, "/held")), ...(await store(freeChat, "/free"))];
    // Another notifier is sending to the chat: its lease is taken for a while.
    await h.host.context.redis.set(`${h.redis.prefix}:notifier:chat-lock:${busyChat}`, "other-sender", "PX", 1_500);
    const jobId = await enqueueV2(targets);

    await h.fake.waitForMessages(freeChat, 1, { timeoutMs: WAIT.timeout });
    const freeAt = Date.now();
    expect(h.fake.sent(busyChat)).toHaveLength(0);
    const job = await h.finished(jobId);

    // A retry reports what it found: the free chat's message sent by the first run.
    expect(Object.values(job.returnvalue.messages).sort()).toEqual(["already sent", "sent"]);
    expect(h.fake.sent(busyChat).map((m) => command(m.plainText))).toEqual(["/held"]);
    expect(h.fake.sent(busyChat)[0]!.time).toBeGreaterThan(freeAt);
    expect(h.fake.sent(freeChat)).toHaveLength(1);
  });

  it("holds only the chat Telegram answered 429 for; the others are sent at once, every message once and in order", async () => {
    const chats = [9_430, 9_431, 9_432];
    const targets = (await Promise.all(chats.map((chatId) => store(chatId, `/x${chatId}`, `/y${chatId}`)))).flat();
    h.fake.failNext("sendMessage", { error_code: 429, retry_after: 2 });

    const job = await h.finished(await enqueueV2(targets));

    for (const outcome of Object.values(job.returnvalue.messages)) expect(["sent", "already sent"]).toContain(outcome);
    const firsts = chats.map((chatId) => h.fake.sent(chatId)[0]!.time).sort((a, b) => a - b);
    // Two chats got their first message at once; the held one about two seconds later.
    expect(firsts[1]! - firsts[0]!).toBeLessThan(900);
    expect(firsts[2]! - firsts[0]!).toBeGreaterThanOrEqual(1_900);
    for (const chatId of chats) {
      expect(h.fake.sent(chatId).map((m) => command(m.plainText))).toEqual([`/x${chatId}`, `/y${chatId}`]);
    }
    expect(h.fake.requests("sendMessage").filter((r) => chats.includes(Number(r.params.chat_id)))).toHaveLength(7);
  });

  it("still drains a v1 job queued before v2 existed (no chat in it)", async () => {
    const [target] = await store(9_440, "/legacy");
    const job = await h.finished(await h.enqueue(target!.notificationId, undefined, { legacy: true }));
    expect(job.returnvalue).toMatchObject({ status: "sent", notificationId: target!.notificationId });
    expect(h.fake.sent(9_440)).toHaveLength(1);
  });
});
