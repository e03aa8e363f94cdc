import { notifyMessagesJobId } from "@ratatoskr/contracts";
import type { ChatHead } from "@ratatoskr/db";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NotifierHarness, WAIT } from "./support/notifier-harness.ts";

/**
 * Issue 23 item 1: the notifier's periodic repairs act only on what they saw. Each test lets the
 * send finish between the repair's read and its write; the repair must then leave the message as
 * the send recorded it, and the person gets it once.
 */
const harnesses: NotifierHarness[] = [];

async function start(env: NodeJS.ProcessEnv): Promise<NotifierHarness> {
  const harness = await NotifierHarness.start({ env: { NOTIFIER_GLOBAL_PER_SECOND: "1000", ...env } });
  harnesses.push(harness);
  return harness;
}

afterEach(async () => {
  vi.restoreAllMocks();
  for (const harness of harnesses.splice(0)) await harness.stop();
});

const outcome = (h: NotifierHarness, chatId: number) =>
  h.message(chatId, "task.success", { taskId: 5, branch: "ratatoskr/5", commit: null, prUrl: null });

describe("notifier repairs: the send finishes between the repair's read and its write", () => {
  it("left-behind sweep: a message it read as left mid-send, then sent by its slow sender, is not resent", async () => {
    const h = await start({ NOTIFIER_LEFT_SENDING_SWEEP_MS: "100" });
    const chatId = 9_301;
    h.fake.addChat(chatId);
    const message = await outcome(h, chatId);
    const notifications = h.repos.notifications;
    const claimNext = notifications.claimNextForChat.bind(notifications);
    let raced = false;
    vi.spyOn(notifications, "claimNextForChat").mockImplementation(async (chat): Promise<ChatHead> => {
      const seen = await claimNext(chat);
      if (Number(chat) === chatId && seen.head?.status === "sending" && !seen.claimed) {
        // The sender the sweep took for dead was only slow: its send is answered and recorded now.
        await notifications.markSent(message.id, [7_001]);
        raced = true;
      }
      return seen;
    });
    // A sender's claim whose lease is gone (it looks dead): the sweep takes the chat after 1 s.
    await notifications.claim(message.id);

    await vi.waitFor(() => expect(raced).toBe(true), WAIT);
    // The sweep's drain has settled (or skipped) what it saw; give it its write, then look.
    await vi.waitFor(async () => {
      expect(await h.host.context.redis.exists(`${h.redis.prefix}:notifier:chat-lock:${chatId}`)).toBe(0);
    }, WAIT);
    expect(await h.notification(message.id)).toMatchObject({
      status: "sent",
      sentMessageIds: [7_001n],
      uncertainAt: null,
    });
    expect(h.sendRequests(chatId)).toHaveLength(0);
  });

  it("unqueued-pending sweep: a message it read as without a job, then sent by its own job, goes out once", async () => {
    const h = await start({ NOTIFIER_UNQUEUED_PENDING_MS: "0", NOTIFIER_STALE_SWEEP_INTERVAL_MS: "100" });
    const chatId = 9_302;
    h.fake.addChat(chatId);
    const notifications = h.repos.notifications;
    const listStale = notifications.listStalePending.bind(notifications);
    // Set once stored; the spy is in place before, so no pass sees the message unraced.
    const target: { id?: number } = {};
    let raced = false;
    vi.spyOn(notifications, "listStalePending").mockImplementation(async (olderThanMs, limit) => {
      const seen = await listStale(olderThanMs, limit);
      if (target.id !== undefined && seen.some((m) => m.id === target.id) && !raced) {
        // Its own job (a transition's, under its own id) runs now and sends it.
        await h.finished(await h.enqueue(target.id, "5-notify-3"));
        raced = true;
      }
      return seen;
    });
    const message = await outcome(h, chatId);
    target.id = message.id;

    await vi.waitFor(() => expect(raced).toBe(true), WAIT);
    const swept = await h.finished(notifyMessagesJobId([{ notificationId: message.id, chatId }]));
    expect(swept.returnvalue).toMatchObject({ status: "skipped", reason: expect.stringContaining("already sent") });
    expect(h.fake.sent(chatId)).toHaveLength(1);
    expect(await h.notification(message.id)).toMatchObject({ status: "sent", uncertainAt: null });
  });

  it("stale-sending sweep: a must-deliver message left mid-send long ago is sent once more, marked (resent)", async () => {
    const h = await start({
      // Long enough that the resend's own claim is never taken for stale while it is sent.
      NOTIFIER_STALE_SENDING_MS: "3000",
      NOTIFIER_STALE_SWEEP_INTERVAL_MS: "100",
      // Only the last-resort sweep looks at it (the left-behind sweep would drain it first).
      NOTIFIER_LEFT_SENDING_SWEEP_MS: "600000",
      NOTIFIER_UNQUEUED_PENDING_MS: "600000",
    });
    const chatId = 9_303;
    h.fake.addChat(chatId);
    const message = await outcome(h, chatId);
    const ack = await h.message(chatId, "bot.help", {});
    await h.repos.notifications.claim(message.id);
    await h.repos.notifications.claim(ack.id);

    await vi.waitFor(async () => expect((await h.notification(message.id)).status).toBe("sent"), WAIT);
    const sent = h.fake.sent(chatId);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.plainText.startsWith("(resent)\n")).toBe(true);
    expect(sent[0]!.plainText).toContain("ratatoskr/5");
    // Claimed a moment after the message, the acknowledgement may fall to the next pass.
    await vi.waitFor(async () => expect(await h.notification(ack.id)).toMatchObject({ status: "uncertain" }), WAIT);
    expect(h.fake.sent(chatId)).toHaveLength(1);
  });
});
