import { jobRequest, parseCallbackData, QUEUE } from "@ratatoskr/contracts";
import type { SentRecord } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { NotifierHarness, WAIT } from "./support/notifier-harness.ts";

let h: NotifierHarness;

beforeAll(async () => {
  h = await NotifierHarness.start();
});
afterAll(async () => {
  await h.stop();
});

const LIMITS = { maxTurns: 5, maxRounds: 3 };

/** A Telegram task that the analyst is thinking about (collecting, analysing). */
async function taskInAnalysis(chatId: number, locale: "ru" | "en" | null) {
  h.fake.addChat(chatId);
  const task = await h.repos.tasks.createTelegramTask({ chatId, locale, ...LIMITS });
  await h.host.context.transition(task.id, { type: "turn.received" });
  return task;
}

const texts = (records: SentRecord[]) => records.map((r) => r.plainText);

describe("notifier: what the chat receives", () => {
  it("sends every part of a task's message into the forum topic the task was opened in", async () => {
    const chatId = -100_1077;
    h.fake.addChat(chatId, { type: "supergroup" });
    const task = await h.repos.tasks.createTelegramTask({ chatId, locale: "en", threadId: 77, ...LIMITS });
    await h.host.context.transition(task.id, { type: "turn.received" });
    await h.host.context.transition(task.id, { type: "user.cancelled" });
    await h.fake.waitForMessages(chatId, 1, { timeoutMs: WAIT.timeout });
    const sends = h.fake.requests("sendMessage").filter((r) => Number(r.params.chat_id) === chatId);
    expect(sends.length).toBeGreaterThan(0);
    expect(sends.map((r) => Number(r.params.message_thread_id))).toEqual(sends.map(() => 77));
  });

  it("shows a ready draft, HTML-escaped in Russian, with Approve / Edit / Cancel buttons for that task", async () => {
    const chatId = 1_001;
    const task = await taskInAnalysis(chatId, "ru");
    await h.host.context.transition(
      task.id,
      { type: "analyst.drafted", consumedTurns: 1, forced: false },
      {
        patch: {
          title: "Почините <login> & выход",
          goal: "Сессия не теряется",
          repos: ["acme/web"],
          why: "Жалобы",
          acceptanceCriteria: ["Вход переживает <F5>"],
        },
      },
    );

    const [draft] = await h.fake.waitForMessages(chatId, 1, { timeoutMs: WAIT.timeout });
    expect(draft?.parseMode).toBe("HTML");
    expect(draft?.plainText).toContain(`Черновик задачи #${task.id}`);
    expect(draft?.plainText).toContain("Название: Почините <login> & выход");
    expect(draft?.plainText).toContain("• Вход переживает <F5>");
    // Escaped text is text: the only bold parts are the template's own labels.
    expect(draft?.entities.filter((e) => e.type === "bold").length).toBeGreaterThan(0);
    expect(draft?.text).toContain("&lt;login&gt; &amp; выход");
    const buttons = draft?.replyMarkup?.inline_keyboard.flat() ?? [];
    expect(buttons.map((b) => b.text)).toEqual(["✅ Утвердить", "✏️ Изменить", "✖️ Отменить"]);
    expect(buttons.map((b) => parseCallbackData(b.callback_data ?? ""))).toEqual([
      { action: "approve", taskId: task.id },
      { action: "edit", taskId: task.id },
      { action: "cancel", taskId: task.id },
    ]);
    await vi.waitFor(async () => {
      const [row] = await h.prisma.notification.findMany({ where: { taskId: task.id } });
      expect(row).toMatchObject({ status: "sent", sentMessageIds: [BigInt(draft?.messageId ?? 0)] });
    }, WAIT);
  });

  it("writes in English by default (BOT_LOCALE), escaping what the person or the agent wrote", async () => {
    const chatId = 1_002;
    const task = await taskInAnalysis(chatId, null);
    await h.host.context.transition(task.id, { type: "analyst.aborted", reason: "<b>poem</b> & song" });
    const reply = await h.message(chatId, "bot.unknown-command", { command: "/x<y>" });
    await h.enqueue(reply.id);

    const sent = await h.fake.waitForMessages(chatId, 2, { timeoutMs: WAIT.timeout });
    expect(texts(sent)[0]).toContain(`Task #${task.id} is closed: this doesn't look like a coding request.`);
    expect(texts(sent)[0]).toContain("Reason: <b>poem</b> & song");
    expect(sent[0]?.entities.some((e) => e.type === "bold")).toBe(false);
    expect(texts(sent)[1]).toContain("I don't know the command /x<y>.");
  });

  it("splits a long text into ordered parts that each fit Telegram's limit", async () => {
    const chatId = 1_003;
    const task = await taskInAnalysis(chatId, "en");
    const words = Array.from({ length: 1_800 }, (_, i) => `w${String(i).padStart(4, "0")}<&>`);
    const lines = Array.from({ length: 60 }, (_, i) => words.slice(i * 30, i * 30 + 30).join(" "));
    await h.host.context.transition(task.id, { type: "analyst.aborted", reason: lines.join("\n") });

    await vi.waitFor(async () => {
      const [row] = await h.prisma.notification.findMany({ where: { taskId: task.id } });
      if (row?.status !== "sent") throw new Error(`notification is ${row?.status}`);
    }, WAIT);
    const parts = h.fake.sent(chatId);
    expect(parts.length).toBeGreaterThanOrEqual(4);
    for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(4_096);
    const seen = parts.flatMap((p) => p.plainText.match(/w\d{4}<&>/g) ?? []);
    expect(seen).toEqual(words);
    expect(parts.map((p) => p.messageId)).toEqual([...parts.map((p) => p.messageId)].sort((a, b) => a - b));
    const [row] = await h.prisma.notification.findMany({ where: { taskId: task.id } });
    expect(row?.sentMessageIds).toEqual(parts.map((p) => BigInt(p.messageId)));
  });
});

describe("notifier: at most once", () => {
  it.each([
    ["an unknown chat", 3_001, () => undefined, /chat not found/],
    [
      "a chat that blocked the bot",
      3_002,
      (chatId: number) => h.fake.blockBot(chatId),
      /blocked by the user/,
    ],
  ])(
    "drops a message to %s after one attempt and completes the job as skipped",
    async (_what, chatId, setUp, reason) => {
      setUp(chatId);
      const notification = await h.message(chatId, "bot.help", {});
      const job = await h.finished(await h.enqueue(notification.id));

      expect(await job.getState()).toBe("completed");
      expect(job.returnvalue).toMatchObject({ status: "skipped", reason: expect.stringMatching(reason) });
      expect(await h.notification(notification.id)).toMatchObject({
        status: "dropped",
        error: expect.stringMatching(reason),
      });
      expect(h.sendRequests(chatId)).toHaveLength(1);
    },
  );

  it("sends one message for several jobs of the same notification", async () => {
    const chatId = 3_003;
    h.fake.addChat(chatId);
    const notification = await h.message(chatId, "bot.help", {});
    const jobIds = await Promise.all(
      ["a", "b", "c"].map((k) => h.enqueue(notification.id, `dup-${k}-${notification.id}`)),
    );
    const jobs = await Promise.all(jobIds.map((id) => h.finished(id)));

    expect(h.fake.sent(chatId)).toHaveLength(1);
    expect(jobs.map((j) => (j.returnvalue as { status: string }).status).sort()).toEqual([
      "sent",
      "skipped",
      "skipped",
    ]);
  });

  it("never resends a notice another notifier left mid-send: it is recorded uncertain", async () => {
    const chatId = 3_004;
    h.fake.addChat(chatId);
    const notification = await h.message(chatId, "bot.help", {});
    // What a notifier that died between claim and send leaves behind.
    await h.repos.notifications.claim(notification.id);
    const job = await h.finished(await h.enqueue(notification.id));

    expect(job.returnvalue).toMatchObject({
      status: "skipped",
      reason: expect.stringContaining("uncertain"),
    });
    expect(await h.notification(notification.id)).toMatchObject({ status: "uncertain" });
    expect(h.sendRequests(chatId)).toHaveLength(0);
  });

  it("sends the message of a job queued before jobs carried their chat, and of one naming the wrong chat", async () => {
    const [legacyChat, ownChat, wrongChat] = [3_005, 3_006, 3_007];
    for (const chatId of [legacyChat, ownChat, wrongChat]) h.fake.addChat(chatId);
    const legacy = await h.message(legacyChat, "bot.help", {});
    const misdirected = await h.message(ownChat, "bot.help", {});
    const legacyJob = await h.finished(await h.enqueue(legacy.id, undefined, { legacy: true }));
    const misdirectedId = `misdirected-${misdirected.id}`;
    await h.host.context.queues.enqueue(
      jobRequest(QUEUE.notify, { v: 1, kind: "message", notificationId: misdirected.id, chatId: wrongChat }, misdirectedId),
    );
    const misdirectedJob = await h.finished(misdirectedId);

    expect(legacyJob.returnvalue).toMatchObject({ status: "sent", notificationId: legacy.id });
    expect(misdirectedJob.returnvalue).toMatchObject({ status: "sent", notificationId: misdirected.id });
    expect(h.fake.sent(legacyChat)).toHaveLength(1);
    expect(h.fake.sent(ownChat)).toHaveLength(1);
    expect(h.fake.sent(wrongChat)).toHaveLength(0);
  });

  it("fails a Gitea status job plainly when Gitea is not configured", async () => {
    const jobId = "gitea-status-1";
    await h.host.context.queues.enqueue(
      jobRequest(QUEUE.notify, { v: 1, kind: "gitea-status", taskId: 1 }, jobId),
    );
    const job = await h.finished(jobId);
    expect(await job.getState()).toBe("failed");
    expect(job.failedReason).toMatch(/GITEA_URL and GITEA_TOKEN are not set/);
    expect(job.attemptsMade).toBe(1);
  });
});
