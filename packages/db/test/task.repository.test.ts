import { TaskRepository, toSnapshot } from "@ratatoskr/db";
import { useTestRepositories } from "./support/test-repositories.ts";
import { describe, expect, it } from "vitest";

const db = useTestRepositories();

let comment = 9000;
const command = (targetNumber: number, targetType: "issue" | "pr" = "issue") =>
  db.repos.tasks.createGiteaTask({
    repoOwner: "acme",
    repoName: "shop",
    targetType,
    targetNumber,
    commandKind: targetType === "pr" ? "fix" : "implement",
    requesterLogin: "alice",
    commentId: comment++,
    maxRounds: 3,
  });

describe("TaskRepository", () => {
  it("creates a Telegram task as a draft with its limits and makes it the chat's active task", async () => {
    const task = await db.repos.tasks.createTelegramTask({
      chatId: -1001234567890,
      userId: 5,
      locale: "ru",
      maxTurns: 4,
      maxRounds: 2,
      budgetUsd: 2.5,
    });

    expect(task).toMatchObject({
      source: "telegram",
      status: "draft",
      version: 0,
      chatId: -1001234567890n,
      locale: "ru",
    });
    expect(toSnapshot(task)).toEqual({
      id: task.id,
      source: "telegram",
      status: "draft",
      version: 0,
      turnCount: 0,
      pendingTurns: 0,
      analysing: false,
      skipRequested: false,
      round: 0,
      maxTurns: 4,
      maxRounds: 2,
      budgetUsd: 2.5,
      pausedStep: null,
    });
    expect((await db.repos.tasks.findActiveByChat(-1001234567890))?.id).toBe(task.id);
  });

  it("points the chat at the newest task and forgets it once it is final", async () => {
    const older = await db.repos.tasks.createTelegramTask({ chatId: 77, maxTurns: 4, maxRounds: 2 });
    const newer = await db.repos.tasks.createTelegramTask({ chatId: 77, maxTurns: 4, maxRounds: 2 });
    expect((await db.repos.tasks.findActiveByChat(77))?.id).toBe(newer.id);
    expect(older.id).not.toBe(newer.id);

    await db.repos.applyTransition(newer.id, { type: "user.cancelled" });
    expect(await db.repos.tasks.findActiveByChat(77)).toBeNull();
    expect(await db.repos.tasks.findActiveByChat(78)).toBeNull();
  });

  it("lets an older draft of the chat become active again", async () => {
    const older = await db.repos.tasks.createTelegramTask({ chatId: 79, maxTurns: 4, maxRounds: 2 });
    await db.repos.tasks.createTelegramTask({ chatId: 79, maxTurns: 4, maxRounds: 2 });
    await db.repos.tasks.setActiveTask(79, older.id);
    expect((await db.repos.tasks.findActiveByChat(79))?.id).toBe(older.id);
  });

  it("creates a Gitea command as received, keyed by its target", async () => {
    const task = await command(3, "pr");

    expect(task).toMatchObject({
      source: "gitea",
      status: "received",
      targetKey: "acme/shop#3",
      targetType: "pr",
      commandKind: "fix",
    });
    expect(toSnapshot(task).command).toEqual({ kind: "fix", target: "pr", targetKey: "acme/shop#3" });
    expect((await db.repos.tasks.findByComment("acme", "shop", task.commentId ?? 0n))?.id).toBe(task.id);
  });

  it("lists a target's unfinished commands in receive order", async () => {
    const first = await command(20);
    const second = await command(20);
    const third = await command(20);
    await command(21);
    await db.repos.applyTransition(first.id, { type: "command.authorized" });
    await db.repos.applyTransition(first.id, { type: "command.started" });
    await db.repos.applyTransition(second.id, { type: "command.rejected", reason: "read-only requester" });

    const queue = await db.repos.tasks.listTargetQueue("acme/shop#20");
    expect(queue.map((task) => [task.id, task.status])).toEqual([
      [first.id, "running"],
      [third.id, "received"],
    ]);
    expect((await db.repos.tasks.listByStatus("gitea", ["running"])).map((task) => task.id)).toContain(
      first.id,
    );
  });

  it("updates draft and run fields without touching the state machine's columns", async () => {
    const task = await db.repos.tasks.createTelegramTask({ chatId: 90, maxTurns: 4, maxRounds: 2 });
    await db.repos.tasks.updateDraft(task.id, {
      title: "Add dark mode",
      repos: ["acme/web"],
      acceptanceCriteria: ["toggle persists"],
    });
    const updated = await db.repos.tasks.updateRun(task.id, {
      branch: "ratatoskr/1-dark-mode",
      agentSessionId: "ses_1",
      agentServerUrl: "http://127.0.0.1:4096",
    });

    expect(updated).toMatchObject({
      title: "Add dark mode",
      repos: ["acme/web"],
      acceptanceCriteria: ["toggle persists"],
      branch: "ratatoskr/1-dark-mode",
      agentSessionId: "ses_1",
      status: "draft",
      version: 0,
    });
  });

  it("works inside a caller's transaction", async () => {
    const attempt = db.prisma.$transaction(async (tx) => {
      await new TaskRepository(tx).createTelegramTask({ chatId: 91, maxTurns: 4, maxRounds: 2 });
      throw new Error("changed course");
    });

    await expect(attempt).rejects.toThrow("changed course");
    expect(await db.repos.tasks.findActiveByChat(91)).toBeNull();
    expect(await db.prisma.task.count({ where: { chatId: 91 } })).toBe(0);
  });

  it("finds a plan an older process wrote during a rolling upgrade, under the names it still used", async () => {
    const planned = await command(31);
    const targetKey = planned.targetKey!;
    // What the release before one_lifecycle writes: status 'succeeded', event 'command.plan-drafted'.
    await db.prisma.task.update({ where: { id: planned.id }, data: { status: "succeeded", version: 1 } });
    await db.prisma.taskEvent.create({
      data: { taskId: planned.id, version: 1, type: "command.plan-drafted", payload: { plan: "1. old-style plan" }, fromStatus: "running", toStatus: "succeeded" },
    });
    expect(await db.repos.tasks.latestPlan(targetKey)).toBe("1. old-style plan");
  });
});
