import { afterEach, describe, expect, it, vi } from "vitest";
import { NotifierHarness, WAIT } from "./support/notifier-harness.ts";

/**
 * Sends whose answer never comes back: Telegram answering late, or resetting the connection
 * after it delivered. Nothing the chat got is sent again blindly; what the dialogue cannot go on
 * without is sent once more, marked; the rest is recorded as uncertain and counted.
 */
const harnesses: NotifierHarness[] = [];

async function start(env: NodeJS.ProcessEnv = {}): Promise<NotifierHarness> {
  const harness = await NotifierHarness.start({ env });
  harnesses.push(harness);
  return harness;
}

afterEach(async () => {
  for (const harness of harnesses.splice(0).reverse()) await harness.stop();
});

async function doubtCount(h: NotifierHarness, settled: "resent" | "uncertain"): Promise<number> {
  const metric = await h.host.context.metrics.registry
    .getSingleMetric("ratatoskr_notifications_in_doubt_total")
    ?.get();
  return (metric?.values ?? [])
    .filter((v) => v.labels.settled === settled)
    .reduce((sum, v) => sum + v.value, 0);
}

const question = (h: NotifierHarness, chatId: number) =>
  h.message(chatId, "task.questions", { taskId: 77, questions: ["Which repository?"] });

describe("notifier: sends in doubt", () => {
  it("waits out a slow answer (longer than the chat lease) and sends the message once", async () => {
    const h = await start();
    const chatId = 6_001;
    h.fake.addChat(chatId);
    h.fake.answerLate("sendMessage", 6_000);
    const slow = await h.message(chatId, "bot.unknown-command", { command: "/slow" });
    const next = await h.message(chatId, "bot.unknown-command", { command: "/next" });
    await h.enqueue(slow.id);
    await h.enqueue(next.id);

    await vi.waitFor(async () => expect((await h.notification(next.id)).status).toBe("sent"), {
      ...WAIT,
      timeout: 25_000,
    });
    expect(await h.notification(slow.id)).toMatchObject({ status: "sent", uncertainAt: null });
    expect(h.sendRequests(chatId)).toHaveLength(2);
    expect(h.fake.sent(chatId).map((r) => /\/\w+/.exec(r.plainText)?.[0])).toEqual(["/slow", "/next"]);
  }, 40_000);

  it("never resends a notice whose connection was reset after delivery: uncertain, counted, the chat goes on", async () => {
    const h = await start();
    const chatId = 6_002;
    h.fake.addChat(chatId);
    h.fake.resetAfterRunning("sendMessage");
    const notice = await h.message(chatId, "bot.unknown-command", { command: "/reset" });
    const next = await h.message(chatId, "bot.unknown-command", { command: "/after" });
    const job = await h.finished(await h.enqueue(notice.id));
    await h.enqueue(next.id);

    expect(job.returnvalue).toMatchObject({ status: "skipped", reason: expect.stringContaining("uncertain") });
    expect(await h.notification(notice.id)).toMatchObject({ status: "uncertain", uncertainAt: expect.any(Date) });
    await vi.waitFor(async () => expect((await h.notification(next.id)).status).toBe("sent"), WAIT);
    expect(h.fake.sent(chatId).map((r) => /\/\w+/.exec(r.plainText)?.[0])).toEqual(["/reset", "/after"]);
    expect(h.sendRequests(chatId)).toHaveLength(2);
    expect(await doubtCount(h, "uncertain")).toBe(1);
  });

  it("sends a question whose connection was reset once more, marked (resent), and no more", async () => {
    const h = await start();
    const chatId = 6_003;
    h.fake.addChat(chatId);
    h.fake.resetAfterRunning("sendMessage");
    const asked = await question(h, chatId);
    const job = await h.finished(await h.enqueue(asked.id));

    expect(job.returnvalue).toMatchObject({ status: "sent" });
    const sent = h.fake.sent(chatId);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.plainText).toContain("Which repository?");
    expect(sent[0]!.plainText).not.toContain("(resent)");
    expect(sent[1]!.plainText.startsWith("(resent)\n")).toBe(true);
    expect(sent[1]!.plainText).toContain("Which repository?");
    expect(await h.notification(asked.id)).toMatchObject({
      status: "sent",
      uncertainAt: expect.any(Date),
      sentMessageIds: [BigInt(sent[1]!.messageId)],
    });
    expect(await doubtCount(h, "resent")).toBe(1);
  });

  it("gives up on a call after the send timeout: a question is resent once, a second doubt is only recorded", async () => {
    const h = await start({ NOTIFIER_SEND_TIMEOUT_MS: "1000" });
    const chatId = 6_004;
    h.fake.addChat(chatId);
    h.fake.answerLate("sendMessage", 3_000, 2);
    const asked = await question(h, chatId);
    const job = await h.finished(await h.enqueue(asked.id));

    expect(job.returnvalue).toMatchObject({ status: "skipped", reason: expect.stringContaining("uncertain") });
    expect(await h.notification(asked.id)).toMatchObject({ status: "uncertain" });
    expect(h.sendRequests(chatId)).toHaveLength(2);
    expect(h.fake.sent(chatId).map((r) => r.plainText.startsWith("(resent)"))).toEqual([false, true]);
    expect(await doubtCount(h, "resent")).toBe(1);
    expect(await doubtCount(h, "uncertain")).toBe(1);
  });
});
