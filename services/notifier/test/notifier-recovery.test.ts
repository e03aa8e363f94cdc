import { notifyMessagesJobId } from "@ratatoskr/contracts";
import { Telegram } from "telegraf";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createNotifierService,
  TelegramSender,
  type MessageChannel,
  type TelegramMessageApi,
} from "../src/index.ts";
import { NotifierHarness, WAIT } from "./support/notifier-harness.ts";

const harnesses: NotifierHarness[] = [];

async function start(...args: Parameters<typeof NotifierHarness.start>): Promise<NotifierHarness> {
  const harness = await NotifierHarness.start(...args);
  harnesses.push(harness);
  return harness;
}

afterEach(async () => {
  // Replicas that joined another harness first, then the owner of the shared resources.
  for (const harness of harnesses.splice(0).reverse()) await harness.stop();
});

/**
 * A replica that leaves a chat its stopped peer was sending to to the job handed back (no
 * left-sending sweep after its start-up pass): the job's own path is what these tests watch.
 */
const JOB_PATH_ONLY = { NOTIFIER_LEFT_SENDING_SWEEP_MS: "600000" };

/**
 * A replica Telegram never answers, so its send is still in flight when it stops; `started`
 * resolves once its first send has gone out.
 */
async function startUnanswered(): Promise<{ first: NotifierHarness; started: Promise<void> }> {
  let sendStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (sendStarted = resolve));
  const stuck: MessageChannel = {
    send: () => {
      sendStarted();
      return new Promise<number[]>(() => undefined);
    },
  };
  const first = await start({
    service: createNotifierService({ channel: () => stuck }),
    env: { SHUTDOWN_TIMEOUT_MS: "200" },
  });
  return { first, started };
}

/** A text of `lines` long lines: several Telegram messages' worth. */
function longReason(lines: number): string {
  return Array.from(
    { length: lines },
    (_, i) => `line ${String(i).padStart(3, "0")} ${"x".repeat(180)}`,
  ).join("\n");
}

describe("notifier: recovery", () => {
  it("resumes a long text after a 429 between its parts, sending no part twice", async () => {
    let calls = 0;
    const service = createNotifierService({
      channel: (_ctx, config) => {
        const telegram = new Telegram(config.telegram.token ?? "", {
          apiRoot: config.telegram.apiRoot ?? "",
        });
        const api: TelegramMessageApi = {
          // The second part hits the rate limit, as a busy bot would.
          sendMessage: async (chatId, text, extra) => {
            calls += 1;
            if (calls === 2) {
              throw {
                ok: false,
                error_code: 429,
                description: "Too Many Requests: retry after 1",
                parameters: { retry_after: 1 },
              };
            }
            return telegram.sendMessage(chatId, text, extra);
          },
          editMessageText: (...args) => telegram.editMessageText(...args),
        };
        return new TelegramSender(api);
      },
    });
    const h = await start({ service });
    const chatId = 4_001;
    h.fake.addChat(chatId);
    const notification = await h.message(chatId, "task.failed", { taskId: 9, reason: longReason(60) });
    const job = await h.finished(await h.enqueue(notification.id));

    const parts = h.fake.sent(chatId);
    expect(job.returnvalue).toMatchObject({ status: "sent", messageIds: parts.map((p) => p.messageId) });
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const lines = parts.flatMap((p) => p.plainText.match(/line \d{3}/g) ?? []);
    expect(lines).toEqual(Array.from({ length: 60 }, (_, i) => `line ${String(i).padStart(3, "0")}`));
    expect((parts[1]?.time ?? 0) - (parts[0]?.time ?? 0)).toBeGreaterThanOrEqual(950);
    expect(await h.notification(notification.id)).toMatchObject({
      status: "sent",
      attempts: 2,
      sentMessageIds: parts.map((p) => BigInt(p.messageId)),
    });
  });

  it("never resends a notice whose notifier stopped mid-send: the next replica records it uncertain within seconds", async () => {
    const { first, started } = await startUnanswered();
    const chatId = 4_002;
    first.fake.addChat(chatId);
    const notification = await first.message(chatId, "bot.help", {});
    const later = await first.message(chatId, "bot.unknown-command", { command: "/later" });
    const jobId = await first.enqueue(notification.id);
    await started;

    const second = await start({ joining: first, env: JOB_PATH_ONLY });
    await first.host.shutdown("simulated crash");
    const stoppedAt = Date.now();
    await second.enqueue(later.id);
    const job = await second.finished(jobId);

    expect(job.returnvalue).toMatchObject({
      status: "skipped",
      reason: expect.stringContaining("uncertain"),
    });
    expect(await second.notification(notification.id)).toMatchObject({
      status: "uncertain",
      error: expect.stringContaining("delivery unknown"),
    });
    await vi.waitFor(async () => expect((await second.notification(later.id)).status).toBe("sent"), WAIT);
    // The chat was blocked for about one lease, not 45 s.
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(second.sendRequests(chatId).map((r) => String(r.params.text))).toEqual([
      expect.stringContaining("/later"),
    ]);
  });

  it("sends a question once more, marked (resent), when its notifier stopped mid-send", async () => {
    const { first, started } = await startUnanswered();
    const chatId = 4_005;
    first.fake.addChat(chatId);
    const asked = await first.message(chatId, "task.questions", { taskId: 3, questions: ["Which branch?"] });
    const jobId = await first.enqueue(asked.id);
    await started;

    const second = await start({ joining: first, env: JOB_PATH_ONLY });
    await first.host.shutdown("simulated crash");
    const job = await second.finished(jobId);

    expect(job.returnvalue).toMatchObject({ status: "sent" });
    const sent = second.fake.sent(chatId);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.plainText.startsWith("(resent)\n")).toBe(true);
    expect(sent[0]!.plainText).toContain("Which branch?");
    expect(await second.notification(asked.id)).toMatchObject({ status: "sent", uncertainAt: expect.any(Date) });
  });

  it("starts without a bot token and writes messages to its log instead", async () => {
    const h = await start({ env: { TELEGRAM_BOT_TOKEN: "" } });
    const chatId = 4_003;
    h.fake.addChat(chatId);
    const notification = await h.message(chatId, "bot.help", {});
    const job = await h.finished(await h.enqueue(notification.id));

    expect(job.returnvalue).toMatchObject({ status: "sent", messageIds: [] });
    expect(await h.notification(notification.id)).toMatchObject({ status: "sent" });
    expect(h.fake.requests()).toHaveLength(0);
  });

  it("retries a 5xx with backoff instead of at once, and delivers once", async () => {
    const h = await start();
    const chatId = 4_004;
    h.fake.addChat(chatId);
    h.fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" });
    const notification = await h.message(chatId, "bot.help", {});
    const job = await h.finished(await h.enqueue(notification.id));

    expect(job.returnvalue).toMatchObject({ status: "sent" });
    const requests = h.sendRequests(chatId);
    expect(requests).toHaveLength(2);
    // The first retry waits the queue's backoff (5 s); a storm would come back within milliseconds.
    expect((requests[1]?.time ?? 0) - (requests[0]?.time ?? 0)).toBeGreaterThanOrEqual(4_000);
    expect(h.fake.sent(chatId)).toHaveLength(1);
  });

  it("sends a reply whose notify job was never queued, once, after the unqueued-pending delay", async () => {
    const h = await start({
      env: { NOTIFIER_UNQUEUED_PENDING_MS: "0", NOTIFIER_STALE_SWEEP_INTERVAL_MS: "200" },
    });
    const chatId = 4_077;
    h.fake.addChat(chatId);
    // Stored as ingress stores a reply while Redis is away: a row and no job.
    const stored = await h.message(chatId, "bot.help", {});
    await vi.waitFor(async () => expect((await h.notification(stored.id)).status).toBe("sent"), WAIT);
    const sent = await h.fake.waitForMessages(chatId, 1, { timeoutMs: WAIT.timeout });
    expect(sent[0]!.plainText).toContain("/start");
    // The sweeper queued it itself (a v2 job of the stale messages it found).
    const job = await h.finished(notifyMessagesJobId([{ notificationId: stored.id, chatId }]));
    expect(job.returnvalue).not.toMatchObject({ skipped: true });
    expect(await h.host.context.repos.notifications.listStalePending(0)).toEqual([]);
    expect(h.sendRequests(chatId)).toHaveLength(1);
  });
});

