import { useTestRepositories } from "./support/test-repositories.ts";
import { NotificationRepository } from "../src/repositories/notification.repository.ts";
import { describe, expect, it, vi } from "vitest";
import { sqlPoolOf } from "../src/sql/sql-pool.ts";

const db = useTestRepositories();

const message = (chatId: number, channel: "telegram" | "gitea" = "telegram") =>
  db.repos.notifications.create({ channel, chatId, template: "bot.help", params: {} });

describe("NotificationRepository, sender side", () => {
  it("lists a chat's unsettled messages (pending, or left sending) oldest first after a cursor, and nothing else", async () => {
    const [first, sending, second, otherChat, gitea, third, sent] = [
      await message(501),
      await message(501),
      await message(501),
      await message(502),
      await message(501, "gitea"),
      await message(501),
      await message(501),
    ];
    await db.repos.notifications.claim(sending!.id);
    await db.repos.notifications.claim(sent!.id);
    await db.repos.notifications.markSent(sent!.id, [1]);

    const unsettled = await db.repos.notifications.listUnsettledForChat(501, 0);

    expect(unsettled.map((n) => n.id)).toEqual([first!.id, sending!.id, second!.id, third!.id]);
    expect(unsettled.map((n) => n.id)).not.toContain(otherChat!.id);
    expect(unsettled.map((n) => n.id)).not.toContain(gitea!.id);
    const page = await db.repos.notifications.listUnsettledForChat(501, 0, 2);
    expect(page.map((n) => n.id)).toEqual([first!.id, sending!.id]);
    const next = await db.repos.notifications.listUnsettledForChat(501, sending!.id, 2);
    expect(next.map((n) => n.id)).toEqual([second!.id, third!.id]);
  });

  it("claims a chat's oldest pending message in one statement and says whether another follows", async () => {
    const [sent, first, second, other] = [await message(506), await message(506), await message(506), await message(507)];
    await db.repos.notifications.claim(sent!.id);
    await db.repos.notifications.markSent(sent!.id, [5n]);

    const next = await db.repos.notifications.claimNextForChat(506);
    expect(next).toMatchObject({ claimed: true, more: true, head: { id: first!.id, status: "sending", attempts: 1 } });
    expect((await db.repos.notifications.findById(first!.id))?.status).toBe("sending");

    // A `sending` head (its sender died) comes back unclaimed, ahead of the pending one after it.
    expect(await db.repos.notifications.claimNextForChat(506)).toMatchObject({
      claimed: false,
      more: true,
      head: { id: first!.id, status: "sending" },
    });
    await db.repos.notifications.markSent(first!.id, [6n]);
    expect(await db.repos.notifications.claimNextForChat(506)).toMatchObject({
      claimed: true,
      more: false,
      head: { id: second!.id },
    });
    await db.repos.notifications.markSent(second!.id, [7n]);
    expect(await db.repos.notifications.claimNextForChat(506)).toEqual({ head: null, claimed: false, more: false });
    expect((await db.repos.notifications.findById(other!.id))?.status).toBe("pending");
  });

  it("claims the next message of chats drained at once in one statement, each drain its own head or nothing", async () => {
    const [a1, a2, b1, c1] = [await message(531), await message(531), await message(532), await message(533)];
    await db.repos.notifications.claim(c1!.id); // its sender died: comes back unclaimed
    const pool = sqlPoolOf(db.prisma)!;
    const query = vi.spyOn(pool, "query");
    try {
      const heads = await Promise.all([531, 532, 533, 534].map((chatId) => db.repos.notifications.claimNextForChat(chatId)));

      expect(heads).toEqual([
        { claimed: true, more: true, head: expect.objectContaining({ id: a1!.id, status: "sending", attempts: 1 }) },
        { claimed: true, more: false, head: expect.objectContaining({ id: b1!.id, status: "sending", chatId: 532n }) },
        { claimed: false, more: false, head: expect.objectContaining({ id: c1!.id, status: "sending" }) },
        { head: null, claimed: false, more: false },
      ]);
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      query.mockRestore();
    }
    expect((await db.repos.notifications.findById(a2!.id))?.status).toBe("pending");
    expect((await db.repos.notifications.findById(c1!.id))?.attempts).toBe(1);
  });

  it("records a send and claims the next messages, of its own chat and others, in one statement", async () => {
    const [a1, a2, b1] = [await message(551), await message(551), await message(552)];
    await db.repos.notifications.claim(a1!.id);
    const pool = sqlPoolOf(db.prisma)!;
    const query = vi.spyOn(pool, "query");
    try {
      const [marked, nextOfA, nextOfB] = await Promise.all([
        db.repos.notifications.markSent(a1!.id, [9]),
        db.repos.notifications.claimNextForChat(551),
        db.repos.notifications.claimNextForChat(552),
      ]);

      expect(marked).toBe(true);
      // The message marked in the same statement is settled, not a head left `sending`.
      expect(nextOfA).toEqual({ claimed: true, more: false, head: expect.objectContaining({ id: a2!.id, status: "sending" }) });
      expect(nextOfB).toEqual({ claimed: true, more: false, head: expect.objectContaining({ id: b1!.id, status: "sending" }) });
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      query.mockRestore();
    }
    expect(await db.repos.notifications.findById(a1!.id)).toMatchObject({ status: "sent", sentMessageIds: [9n] });
  });

  it("plans the sender's claim-and-mark statement once, not again for every message", async () => {
    const pool = sqlPoolOf(db.prisma)!;
    // Sequential calls reuse the pool's last idle connection, where the statement is prepared.
    for (let i = 0; i < 8; i++) {
      const row = await message(541 + i);
      await db.repos.notifications.claimNextForChat(541 + i);
      await db.repos.notifications.markSent(row.id, [i]);
    }
    const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
      "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'rt-notification-mark-and-claim'",
    );

    expect(rows).toHaveLength(1);
    // Postgres tries five custom plans, then keeps the generic one if it costs no more.
    expect(Number(rows[0]!.generic_plans)).toBeGreaterThan(Number(rows[0]!.custom_plans));
  });

  it("lists chats left behind: a message claimed a while ago, or an untried head stored a while ago", async () => {
    const untried = await message(511);
    const claimed = await message(512);
    await db.repos.notifications.claim(claimed.id);
    // A head that was tried waits out its job's backoff, even with an untried message behind it.
    const released = await message(513);
    await message(513);
    await db.repos.notifications.claim(released.id);
    await db.repos.notifications.release(released.id, "5xx");
    // Only these chats: the file's other tests share the schema.
    const list = async (pendingBeforeMs: number, claimedBeforeMs = 60_000) =>
      (await db.repos.notifications.listChatsLeftBehind({ claimedBeforeMs, pendingBeforeMs })).filter(
        (chatId) => chatId >= 511 && chatId <= 513,
      );

    expect(await list(60_000)).toEqual([]);
    await vi.waitFor(async () => expect(await list(0, 0)).toEqual([511, 512]), { timeout: 5_000, interval: 10 });
    expect(await list(0)).toEqual([511]);
    expect(untried.chatId).toBe(511n);
  });

  it("records sends that finish together in one statement, each answered for itself", async () => {
    const rows = await Promise.all([521, 522, 523, 524].map((chatId) => message(chatId)));
    for (const row of rows.slice(0, 3)) await db.repos.notifications.claim(row.id);

    const marked = await Promise.all(
      rows.map((row, i) => db.repos.notifications.markSent(row.id, i === 1 ? [] : [100 + i, 200 + i])),
    );

    expect(marked).toEqual([true, true, true, false]);
    const after = await Promise.all(rows.map((row) => db.repos.notifications.findById(row.id)));
    expect(after.map((row) => [row?.status, row?.sentMessageIds])).toEqual([
      ["sent", [100n, 200n]],
      ["sent", []],
      ["sent", [102n, 202n]],
      ["pending", []],
    ]);
  });

  it("resends a must-deliver message once after a doubtful send, and never a second time", async () => {
    const notification = await message(504);
    const first = (await db.repos.notifications.claim(notification.id))!;

    expect(await db.repos.notifications.markUncertain(first, "reset after send", true)).toBe("resend");
    expect(await db.repos.notifications.findById(notification.id)).toMatchObject({
      status: "pending",
      uncertainAt: expect.any(Date),
    });
    const second = (await db.repos.notifications.claim(notification.id))!;
    expect(await db.repos.notifications.markUncertain(second, "reset again", true)).toBe("uncertain");
    expect(await db.repos.notifications.findById(notification.id)).toMatchObject({ status: "uncertain" });
    expect(await db.repos.notifications.claim(notification.id)).toBeNull();
    expect(await db.repos.notifications.markUncertain(second, "late", true)).toBeNull();
  });

  it("settles any other doubtful send as uncertain at once", async () => {
    const notification = await message(505);
    const claimed = (await db.repos.notifications.claim(notification.id))!;

    expect(await db.repos.notifications.markUncertain(claimed, "timeout", false)).toBe("uncertain");
    expect(await db.repos.notifications.findById(notification.id)).toMatchObject({
      status: "uncertain",
      error: "timeout",
      uncertainAt: expect.any(Date),
    });
  });

  it("settles a doubt only while the row is still the claim it saw: a finished send or a newer claim is left alone", async () => {
    const finished = await message(508);
    const seen = (await db.repos.notifications.claim(finished.id))!;
    // The send finishes between the look and the write.
    await db.repos.notifications.markSent(finished.id, [31]);
    expect(await db.repos.notifications.markUncertain(seen, "sender looked dead", true)).toBeNull();
    expect(await db.repos.notifications.findById(finished.id)).toMatchObject({ status: "sent", uncertainAt: null });

    const reclaimed = await message(509);
    const old = (await db.repos.notifications.claim(reclaimed.id))!;
    await db.repos.notifications.release(reclaimed.id, "429");
    const newer = (await db.repos.notifications.claim(reclaimed.id))!;
    expect(await db.repos.notifications.markUncertain(old, "sender looked dead", false)).toBeNull();
    expect(await db.repos.notifications.findById(reclaimed.id)).toMatchObject({
      status: "sending",
      attempts: newer.attempts,
      uncertainAt: null,
    });
  });

  it("keeps the parts that went out when a send is released, so the retry resumes after them", async () => {
    const notification = await message(503);
    await db.repos.notifications.claim(notification.id);

    expect(await db.repos.notifications.release(notification.id, "429 after part 2", [11, 12])).toBe(true);
    const retried = await db.repos.notifications.claim(notification.id);

    expect(retried).toMatchObject({ status: "sending", attempts: 2, error: "429 after part 2" });
    expect(retried?.sentMessageIds).toEqual([11n, 12n]);
  });
});

describe("NotificationRepository, the stale-sending sweep", () => {
  /** Waits until a statement of this database is blocked on a row lock (the sweep behind the send's write). */
  async function blockedOnRowLock(): Promise<void> {
    const pool = sqlPoolOf(db.prisma)!;
    await vi.waitFor(
      async () => {
        const { rows } = await pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE notifications SET%status = CASE%claimed_at <%'`,
        );
        expect(Number(rows[0]!.n)).toBe(1);
      },
      { timeout: 5_000, interval: 10 },
    );
  }

  it("leaves a send that finishes while it runs as that send recorded it", async () => {
    const notification = await db.repos.notifications.create({
      channel: "telegram",
      chatId: 520,
      template: "task.success",
      params: { taskId: 1, branch: "b", commit: null, prUrl: null },
    });
    await db.repos.notifications.claim(notification.id);
    // The send's own result write is under way (its row locked) when the sweep writes.
    const send = await sqlPoolOf(db.prisma)!.connect();
    try {
      await send.query("BEGIN");
      await send.query("UPDATE notifications SET status = 'sent', sent_message_ids = '{41}' WHERE id = $1", [notification.id]);
      const sweep = db.repos.notifications.settleStaleSending(-1, ["bot.help"]);
      await blockedOnRowLock();
      await send.query("COMMIT");
      const settled = await sweep;
      expect(settled.resend.map((r) => r.id)).not.toContain(notification.id);
    } finally {
      send.release();
    }
    expect(await db.repos.notifications.findById(notification.id)).toMatchObject({
      status: "sent",
      sentMessageIds: [41n],
      uncertainAt: null,
    });
  });

  it("puts a must-deliver message back to be resent once, and records an acknowledgement as uncertain", async () => {
    const outcome = await db.repos.notifications.create({
      channel: "telegram",
      chatId: 521,
      template: "task.failed",
      params: { taskId: 2, reason: "r", findings: [] },
    });
    const ack = await message(521);
    await db.repos.notifications.claim(outcome.id);
    await db.repos.notifications.claim(ack.id);

    const settled = await db.repos.notifications.settleStaleSending(-1, ["bot.help"]);

    expect(settled.resend).toContainEqual({ id: outcome.id, chatId: 521 });
    expect(await db.repos.notifications.findById(outcome.id)).toMatchObject({
      status: "pending",
      uncertainAt: expect.any(Date),
    });
    expect(await db.repos.notifications.findById(ack.id)).toMatchObject({ status: "uncertain" });
    // Left mid-send again after its resend: now only recorded.
    await db.repos.notifications.claim(outcome.id);
    await db.repos.notifications.settleStaleSending(-1, ["bot.help"]);
    expect(await db.repos.notifications.findById(outcome.id)).toMatchObject({ status: "uncertain" });
  });
});

describe("NotificationRepository, the stale-sending sweep's clock", () => {
  it("measures a claim's age by the database's clock, which wrote it, whatever the notifier host's clock says", async () => {
    const old = await message(530);
    const fresh = await message(530);
    await db.repos.notifications.claim(old.id);
    await db.repos.notifications.claim(fresh.id);
    await sqlPoolOf(db.prisma)!.query("UPDATE notifications SET claimed_at = claimed_at - interval '2 minutes' WHERE id = $1", [old.id]);
    // The notifier's host runs an hour behind the database (and then an hour ahead).
    for (const skewMs of [-3_600_000, 3_600_000]) {
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + skewMs });
      try {
        const settled = await db.repos.notifications.settleStaleSending(60_000, ["bot.help"]);
        expect(settled.uncertain).toBe(skewMs < 0 ? 1 : 0);
      } finally {
        vi.useRealTimers();
      }
      expect(await db.repos.notifications.findById(old.id)).toMatchObject({ status: "uncertain" });
      expect(await db.repos.notifications.findById(fresh.id)).toMatchObject({ status: "sending" });
    }
  });
});

describe("NotificationRepository, the Gitea reply sweep", () => {
  it("lists the Gitea tasks with a reply pending longer than asked, once each, the same in plain SQL and through Prisma", async () => {
    const task = (commentId: number) =>
      db.repos.tasks.createGiteaTask({
        repoOwner: "acme",
        repoName: "shop",
        targetType: "issue",
        targetNumber: 3,
        commandKind: "plan",
        commandMessage: "",
        requesterLogin: "alice",
        commentId,
        maxRounds: 2,
      });
    const [waiting, sent, status, fresh] = [await task(9101), await task(9102), await task(9103), await task(9104)];
    const reply = (taskId: number, template = "task.postmortem") =>
      db.repos.notifications.create({ channel: "gitea", taskId, template, params: {} });
    await reply(waiting.id);
    await reply(waiting.id, "task.postmortem-unavailable");
    const done = (await reply(sent.id))!;
    await db.repos.notifications.claim(done.id);
    await db.repos.notifications.markSent(done.id, [1]);
    await reply(status.id, "gitea.status");
    const templates = ["task.postmortem", "task.postmortem-unavailable"];
    const mine = (ids: number[]) => ids.filter((id) => [waiting.id, sent.id, status.id, fresh.id].includes(id));

    await vi.waitFor(
      async () => expect(mine(await db.repos.notifications.listTasksWithPendingGitea(templates, 0))).toEqual([waiting.id]),
      { timeout: 5_000, interval: 10 },
    );
    await reply(fresh.id);
    expect(mine(await db.repos.notifications.listTasksWithPendingGitea(templates, 60_000))).toEqual([]);
    const throughPrisma = new NotificationRepository(db.prisma);
    await vi.waitFor(
      async () => expect(mine(await throughPrisma.listTasksWithPendingGitea(templates, 0))).toEqual([waiting.id, fresh.id]),
      { timeout: 5_000, interval: 10 },
    );
    expect(mine(await db.repos.notifications.listTasksWithPendingGitea(templates, 0))).toEqual([waiting.id, fresh.id]);
  });
});
