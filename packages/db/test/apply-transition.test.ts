import { IllegalTransitionError } from "@ratatoskr/contracts";
import { TaskNotFoundError } from "@ratatoskr/db";
import { useTestRepositories } from "./support/test-repositories.ts";
import { describe, expect, it } from "vitest";

const db = useTestRepositories();

const newTelegramTask = (chatId = 1001) =>
  db.repos.tasks.createTelegramTask({ chatId, userId: 7, locale: "en", maxTurns: 5, maxRounds: 3 });

let comment = 5000;
const newGiteaTask = () =>
  db.repos.tasks.createGiteaTask({
    repoOwner: "acme",
    repoName: "shop",
    targetType: "issue",
    targetNumber: 12,
    commandKind: "plan",
    commandMessage: "mind the cart",
    requesterLogin: "alice",
    commentId: comment++,
    maxRounds: 2,
  });

async function readyTask() {
  const task = await newTelegramTask();
  await db.repos.applyTransition(task.id, { type: "turn.received" });
  await db.repos.applyTransition(task.id, { type: "analyst.drafted", consumedTurns: 1, forced: false });
  return task;
}

describe("applyTransition", () => {
  it("commits the new state, the audit event and one outbox row per job", async () => {
    const created = await newTelegramTask();
    const { task, followUps } = await db.repos.applyTransition(created.id, { type: "turn.received" });

    expect(task).toMatchObject({ status: "collecting", version: 1, pendingTurns: 1, analysing: true });
    expect(await db.repos.tasks.findById(created.id)).toMatchObject({ status: "collecting", version: 1 });
    expect(
      followUps.map(({ queue, jobId, data, dispatchedAt }) => ({ queue, jobId, data, dispatchedAt })),
    ).toEqual([
      {
        queue: "analyst",
        jobId: `${created.id}-analyst-1`,
        data: { v: 1, taskId: created.id, kind: "turn" },
        dispatchedAt: null,
      },
    ]);
    const events = await db.repos.events.list(created.id);
    expect(
      events.map(({ version, type, fromStatus, toStatus, payload }) => ({
        version,
        type,
        fromStatus,
        toStatus,
        payload,
      })),
    ).toEqual([
      {
        version: 1,
        type: "turn.received",
        fromStatus: "draft",
        toStatus: "collecting",
        payload: { type: "turn.received" },
      },
    ]);
  });

  it("stores a Telegram notice for the task's chat and a notify job that points at it", async () => {
    const ready = await readyTask();
    const { task, followUps } = await db.repos.applyTransition(ready.id, { type: "user.approved" });

    expect(task).toMatchObject({ status: "approved", version: 3, round: 1 });
    const [dev, notify] = followUps;
    expect(dev).toMatchObject({
      queue: "dev",
      jobId: `${ready.id}-dev-3`,
      data: { v: 1, taskId: ready.id, kind: "implement", round: 1 },
    });
    expect(notify).toMatchObject({ queue: "notify", jobId: `${ready.id}-notify-3` });
    const notificationId = (notify?.data as { notificationId: number }).notificationId;
    // The chat rides in the job: the notifier takes its lease before reading anything.
    expect(notify?.data).toEqual({ v: 1, kind: "message", notificationId, chatId: Number(ready.chatId) });
    expect(await db.repos.notifications.findById(notificationId)).toMatchObject({
      taskId: ready.id,
      channel: "telegram",
      chatId: 1001n,
      template: "task.approved",
      params: { taskId: ready.id },
      status: "pending",
    });
  });

  it("turns a Gitea notice into a status-comment job", async () => {
    const created = await newGiteaTask();
    const { task, followUps } = await db.repos.applyTransition(created.id, { type: "command.authorized" });

    expect(task.status).toBe("queued");
    expect(followUps.map(({ queue, jobId, data }) => ({ queue, jobId, data }))).toEqual([
      {
        queue: "notify",
        jobId: `${created.id}-notify-1`,
        data: { v: 1, kind: "gitea-status", taskId: created.id },
      },
      {
        queue: "intake",
        jobId: `${created.id}-dispatch-1`,
        data: { v: 1, kind: "dispatch-next", targetKey: "acme/shop#12", joined: created.id },
      },
    ]);
    const notices = await db.prisma.notification.findMany({ where: { taskId: created.id } });
    expect(notices).toMatchObject([{ channel: "gitea", chatId: null, template: "command.status" }]);
  });

  it("refreshes a command's status comment once per pipeline step and stores why it failed", async () => {
    const created = await newGiteaTask();
    await db.repos.applyTransition(created.id, { type: "command.authorized" });
    await db.repos.applyTransition(created.id, { type: "command.started" });
    const { task, followUps } = await db.repos.applyTransition(created.id, { type: "run.failed", reason: "the push was refused" });

    expect(task).toMatchObject({ status: "failed", failureReason: "the push was refused" });
    expect(followUps.map(({ queue }) => queue)).toEqual(["notify", "postmortem", "intake"]);
    const notices = await db.prisma.notification.findMany({ where: { taskId: created.id } });
    expect(notices.map((n) => [n.channel, n.template])).toEqual([
      ["gitea", "command.status"],
      ["gitea", "command.status"],
      ["gitea", "command.status"],
    ]);
  });

  it("refuses an illegal transition and writes nothing", async () => {
    const created = await newTelegramTask();
    const attempt = db.repos.applyTransition(
      created.id,
      { type: "user.approved" },
      { patch: { title: "sneaky" } },
    );

    await expect(attempt).rejects.toThrow(IllegalTransitionError);
    await expect(attempt).rejects.toMatchObject({
      refusal: { reason: "not-ready", from: "draft", event: "user.approved" },
    });
    expect(await db.repos.tasks.findById(created.id)).toMatchObject({
      status: "draft",
      version: 0,
      title: null,
    });
    expect(await db.repos.events.list(created.id)).toEqual([]);
    expect(await db.prisma.followUp.count({ where: { taskId: created.id } })).toBe(0);
    expect(await db.prisma.notification.count({ where: { taskId: created.id } })).toBe(0);
  });

  it("serializes concurrent transitions of one task", async () => {
    const created = await newTelegramTask();
    const results = await Promise.all([
      db.repos.applyTransition(created.id, { type: "turn.received" }),
      db.repos.applyTransition(created.id, { type: "turn.received" }),
      db.repos.applyTransition(created.id, { type: "turn.received" }),
    ]);

    expect(await db.repos.tasks.findById(created.id)).toMatchObject({
      version: 3,
      pendingTurns: 3,
      analysing: true,
    });
    expect((await db.repos.events.list(created.id)).map((event) => event.version)).toEqual([1, 2, 3]);
    // Only the first turn starts an analysis; the others wait for it (T5).
    expect(results.flatMap((result) => result.followUps.map((followUp) => followUp.queue))).toEqual([
      "analyst",
    ]);
  });

  it("applies a patch with the transition and stamps finishedAt on a final status", async () => {
    const created = await newTelegramTask();
    const { task } = await db.repos.applyTransition(
      created.id,
      { type: "user.cancelled" },
      { patch: { failureReason: "changed my mind" } },
    );

    expect(task).toMatchObject({ status: "cancelled", failureReason: "changed my mind" });
    expect(task.finishedAt).toBeInstanceOf(Date);
  });

  it("clears finishedAt when a retry re-opens a finished task", async () => {
    const ready = await readyTask();
    await db.repos.applyTransition(ready.id, { type: "user.approved" });
    const failed = await db.repos.applyTransition(ready.id, { type: "run.failed", reason: "tests red" });
    expect(failed.task.finishedAt).toBeInstanceOf(Date);

    const retried = await db.repos.applyTransition(ready.id, { type: "user.retried" });
    expect(retried.task).toMatchObject({ status: "approved", finishedAt: null });
  });

  it("rolls everything back when a write alongside the transition fails", async () => {
    const created = await newTelegramTask();
    const attempt = db.repos.applyTransition(
      created.id,
      { type: "turn.received" },
      {
        alongside: async () => {
          throw new Error("disk full");
        },
      },
    );

    await expect(attempt).rejects.toThrow("disk full");
    expect(await db.repos.tasks.findById(created.id)).toMatchObject({ status: "draft", version: 0 });
    expect(await db.prisma.followUp.count({ where: { taskId: created.id } })).toBe(0);
  });

  it("reports a task that does not exist", async () => {
    await expect(db.repos.applyTransition(999_999, { type: "turn.received" })).rejects.toThrow(
      TaskNotFoundError,
    );
  });
});
