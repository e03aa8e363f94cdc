import { DialogueTurnRepository } from "@ratatoskr/db";
import { useTestRepositories } from "./support/test-repositories.ts";
import { describe, expect, it } from "vitest";

const db = useTestRepositories();

const newTask = (chatId = 1) => db.repos.tasks.createTelegramTask({ chatId, maxTurns: 5, maxRounds: 3 });

describe("Gitea command tasks", () => {
  const command = (repoName: string) =>
    db.repos.tasks.createGiteaTask({
      repoOwner: "acme",
      repoName,
      targetType: "issue",
      targetNumber: 1,
      commandKind: "plan",
      requesterLogin: "bob",
      commentId: 777,
      maxRounds: 2,
    });

  it("keys a comment by its repository and its id: the same id in two repositories is two commands", async () => {
    const shop = await command("shop");
    const web = await command("web");
    await expect(command("shop")).rejects.toThrow();
    expect((await db.repos.tasks.findByComment("acme", "shop", 777))?.id).toBe(shop.id);
    expect((await db.repos.tasks.findByComment("acme", "web", 777))?.id).toBe(web.id);
  });
});

describe("NotificationRepository", () => {
  const message = (taskId: number) =>
    db.repos.notifications.create({
      taskId,
      channel: "telegram",
      chatId: 1,
      template: "task.running",
      params: { taskId },
    });

  it("lets exactly one of several racing notifiers claim a message", async () => {
    const task = await newTask();
    const notification = await message(task.id);

    const claims = await Promise.all([1, 2, 3].map(() => db.repos.notifications.claim(notification.id)));
    expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    expect(claims.find((claim) => claim !== null)).toMatchObject({ status: "sending", attempts: 1 });
  });

  it("never hands out a sent message again", async () => {
    const notification = await message((await newTask()).id);
    await db.repos.notifications.claim(notification.id);

    expect(await db.repos.notifications.markSent(notification.id, [101, 102])).toBe(true);
    expect(await db.repos.notifications.claim(notification.id)).toBeNull();
    expect(await db.repos.notifications.findById(notification.id)).toMatchObject({
      status: "sent",
      sentMessageIds: [101n, 102n],
    });
    expect(await db.repos.notifications.markSent(notification.id, [103])).toBe(false);
  });

  it("makes a released message claimable again and counts attempts", async () => {
    const notification = await message((await newTask()).id);
    await db.repos.notifications.claim(notification.id);

    expect(await db.repos.notifications.release(notification.id, "429 retry_after 3")).toBe(true);
    expect(await db.repos.notifications.claim(notification.id)).toMatchObject({
      status: "sending",
      attempts: 2,
      error: "429 retry_after 3",
    });
  });

  it("settles a message left mid-send long ago as uncertain instead of risking a duplicate", async () => {
    const notification = await message((await newTask()).id);
    await db.repos.notifications.claim(notification.id);

    expect(await db.repos.notifications.settleStaleSending(60_000, [notification.template])).toEqual({
      resend: [],
      uncertain: 0,
    });
    expect((await db.repos.notifications.settleStaleSending(-1, [notification.template])).uncertain).toBeGreaterThanOrEqual(1);
    expect(await db.repos.notifications.findById(notification.id)).toMatchObject({
      status: "uncertain",
      uncertainAt: expect.any(Date),
    });
    expect(await db.repos.notifications.claim(notification.id)).toBeNull();
  });

  it("drops a pending message for good", async () => {
    const notification = await message((await newTask()).id);

    expect(await db.repos.notifications.markDropped(notification.id, "bot blocked by user")).toBe(true);
    expect(await db.repos.notifications.claim(notification.id)).toBeNull();
  });
});

describe("DialogueTurnRepository", () => {
  it("marks the turns an analysis consumed in the same transaction as its result", async () => {
    const task = await newTask(2);
    const first = await db.repos.turns.add({
      taskId: task.id,
      role: "user",
      text: "add dark mode",
      telegramMessageId: 10,
    });
    await db.repos.applyTransition(task.id, { type: "turn.received" });
    await db.repos.turns.add({
      taskId: task.id,
      role: "user",
      text: "to the web app",
      telegramMessageId: 11,
    });
    await db.repos.applyTransition(task.id, { type: "turn.received" });
    expect((await db.repos.turns.listPending(task.id)).map((turn) => turn.text)).toEqual([
      "add dark mode",
      "to the web app",
    ]);

    const consumed = [first.id];
    const { task: after } = await db.repos.applyTransition(
      task.id,
      { type: "analyst.asked", questions: ["which repo?"], consumedTurns: consumed.length, forced: false },
      { alongside: async (tx) => void (await new DialogueTurnRepository(tx).markAnalysed(consumed)) },
    );

    expect(after).toMatchObject({ pendingTurns: 1, analysing: true });
    expect((await db.repos.turns.listPending(task.id)).map((turn) => turn.text)).toEqual(["to the web app"]);
    expect((await db.repos.turns.list(task.id)).map((turn) => turn.telegramMessageId)).toEqual([10n, 11n]);
  });
});

describe("AgentTraceRepository", () => {
  it("stores a trace record with its tokens, cost and session", async () => {
    const task = await newTask(3);
    const startedAt = new Date("2026-11-29T10:00:00Z");
    await db.repos.traces.record(
      task.id,
      {
        agent: "dev",
        prompt: "implement",
        output: "done",
        outcome: "completed",
        sessionId: "ses_9",
        serverUrl: "http://127.0.0.1:4096",
        model: "anthropic/claude",
        tokens: { input: 1200, output: 300, reasoning: 50, cacheRead: 900, cacheWrite: 10 },
        cost: 0.0123,
        startedAt,
        endedAt: new Date("2026-11-29T10:05:00Z"),
      },
      1,
    );
    await db.repos.traces.record(
      task.id,
      {
        agent: "reviewer",
        prompt: "review",
        outcome: "failed",
        error: "unparseable verdict",
        startedAt: new Date("2026-11-29T10:06:00Z"),
      },
      1,
    );

    const traces = await db.repos.traces.list(task.id);
    expect(traces.map((trace) => trace.agent)).toEqual(["dev", "reviewer"]);
    expect(traces[0]).toMatchObject({
      round: 1,
      sessionId: "ses_9",
      tokensInput: 1200,
      tokensOutput: 300,
      tokensReasoning: 50,
      tokensCacheRead: 900,
      tokensCacheWrite: 10,
      cost: 0.0123,
      startedAt,
    });
    expect(traces[1]).toMatchObject({
      tokensInput: 0,
      cost: 0,
      output: null,
      endedAt: null,
      error: "unparseable verdict",
    });
    expect((await db.repos.traces.findLatest(task.id, "dev"))?.sessionId).toBe("ses_9");
  });
});

describe("GiteaSweepCursorRepository", () => {
  it("remembers where the sweep of a repository stopped", async () => {
    expect(await db.repos.sweepCursors.find("acme", "shop")).toBeNull();
    await db.repos.sweepCursors.save({
      repoOwner: "acme",
      repoName: "shop",
      lastCommentId: 10,
      lastCommentAt: new Date("2026-11-29T09:00:00Z"),
    });
    await db.repos.sweepCursors.save({
      repoOwner: "acme",
      repoName: "shop",
      lastCommentId: 12,
      lastCommentAt: new Date("2026-11-29T09:30:00Z"),
    });

    expect(await db.repos.sweepCursors.find("acme", "shop")).toMatchObject({
      lastCommentId: 12n,
      lastCommentAt: new Date("2026-11-29T09:30:00Z"),
    });
  });
});
