import { sweepStep } from "@ratatoskr/pipeline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationStep } from "../src/gitea/sweep/intake-sweep.ts";
import { GiteaHarness, REPO } from "./support/gitea-harness.ts";

/**
 * Postgres is the truth and Redis may be lost (X6), on the Gitea door as on Telegram: a command
 * whose intake job vanished is taken up again from Postgres: its authorization, its publishing,
 * and its turn in its line.
 */
let h: GiteaHarness;
const GRACE_MS = 500;

beforeAll(async () => {
  h = await GiteaHarness.start({ PIPELINE_SWEEP_INTERVAL_MS: "200", PIPELINE_SWEEP_GRACE_MS: String(GRACE_MS), GITEA_STATUS_REFRESH_MS: "300" });
});
afterAll(async () => {
  await h?.stop();
});

const longAgo = () => new Date(Date.now() - 60_000);

/** A command stored and announced as the drain does it, whose route job Redis then lost. */
async function commandWithLostRouteJob(number: number, commentId: number, askedAt = longAgo()) {
  const task = await h.storedCommand(number, commentId);
  await h.prisma.followUp.create({
    data: { taskId: task.id, queue: "intake", jobId: `${task.id}-route-0`, data: { v: 1, kind: "route-command", taskId: task.id }, createdAt: askedAt, dispatchedAt: askedAt },
  });
  return task;
}

describe("the intake sweep", () => {
  it("routes a command whose route job Redis lost, and it runs", async () => {
    const n = h.gitea.addIssue(REPO, "Route lost").number!;
    const task = await commandWithLostRouteJob(n, 800_001);
    await h.waitForStatus(task.id, "running");
    await h.transition(task.id, { type: "run.succeeded" });
  });

  it("turns away a command whose route job ended without routing it, saying how", async () => {
    const n = h.gitea.addIssue(REPO, "Route died").number!;
    const task = await commandWithLostRouteJob(n, 800_002);
    const step = authorizationStep({ prisma: h.prisma, queues: h.host.context.queues, transition: h.host.context.transition, graceMs: 0 });
    // As BullMQ shows a job whose worker died too often: failed, with no answer from the handler.
    const result = await sweepStep(
      { dispatcher: h.host.context.dispatcher, logger: h.host.context.logger, graceMs: 0 },
      { ...step, waiting: async () => (await step.waiting()).filter((s) => s.taskId === task.id), jobState: async () => "failed" },
    );
    expect(result.released).toBe(1);
    const rejected = await h.waitForStatus(task.id, "rejected");
    expect(rejected.failureReason).toBe("the authorization ended without reporting back; post the command again");
  });

  it("leaves a burst's young commands to the workers: they are not even looked at", async () => {
    const n = h.gitea.addIssue(REPO, "Young").number!;
    const task = await commandWithLostRouteJob(n, 800_003, new Date());
    const step = authorizationStep({ prisma: h.prisma, queues: h.host.context.queues, transition: h.host.context.transition, graceMs: 30_000 });
    expect((await step.waiting()).map((s) => s.taskId)).not.toContain(task.id);
    await h.waitForStatus(task.id, "running");
    await h.transition(task.id, { type: "run.succeeded" });
  });

  it("publishes a finished command whose publish job Redis lost", async () => {
    const n = h.gitea.addIssue(REPO, "Publish lost").number!;
    const task = await h.command(n, "/agent plan");
    await h.waitForStatus(task.id, "running");
    await h.prisma.followUp.create({
      data: { taskId: task.id, queue: "intake", jobId: `${task.id}-publish-99`, data: { v: 1, kind: "publish", taskId: task.id }, createdAt: longAgo(), dispatchedAt: longAgo() },
    });
    await h.waitForStatus(task.id, "success");
    await h.waitForStatusComment(n, task.id, "✅ done", "Plan posted");
    expect(h.gitea.commentsOf(REPO, n).filter((c) => (c.body ?? "").startsWith(`<!-- ratatoskr:answer task=${task.id} -->`))).toHaveLength(1);
  });

  it("starts a waiting command whose turn came while the dispatch that should have started it was lost", async () => {
    const n = h.gitea.addIssue(REPO, "Dispatch lost").number!;
    const first = await h.command(n, "/agent plan");
    await h.waitForStatus(first.id, "running");
    const second = await h.command(n, "/agent discuss");
    await h.waitForStatus(second.id, "queued");
    // The first ends and its dispatch-next job is lost with Redis: only Postgres knows.
    await h.prisma.task.update({ where: { id: first.id }, data: { status: "success", version: { increment: 1 } } });
    const stalledAt = Date.now();
    await h.waitForStatus(second.id, "running");
    expect(Date.now() - stalledAt).toBeGreaterThanOrEqual(GRACE_MS - 100);
    await h.transition(second.id, { type: "run.succeeded" });
  });
});

describe("the status comment", () => {
  it("is brought up to date when the update of a change was lost with Redis", async () => {
    const n = h.gitea.addIssue(REPO, "Update lost").number!;
    const task = await h.command(n, "/agent plan");
    await h.waitForStatusComment(n, task.id, "▶️ running");
    // Cancelled with no follow-up at all: as if its notify job was lost.
    await h.prisma.task.update({ where: { id: task.id }, data: { status: "cancelled", failureReason: "cancelled by @bob", version: { increment: 1 } } });
    await h.waitForStatusComment(n, task.id, "⏹️ cancelled", "cancelled by @bob");
    const shown = await h.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(shown.statusCommentVersion).toBe(shown.version);
  });
});
