import { createHmac } from "node:crypto";
import { giteaJson } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GiteaE2eHarness, REPO } from "./gitea-e2e-harness.ts";

/**
 * G1 across processes, against the ingress and notifier processes: signed deliveries as the fake
 * Gitea sends them; a forged one stores nothing; Redeliver and 50 concurrent copies of one comment
 * make one command and one status comment; a dropped delivery is taken in by the sweep.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  await h.start(["ingress", "notifier"], { GITEA_REPOS: REPO, GITEA_SWEEP_INTERVAL_MS: "2000" });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

const commandsOf = (commentId: number) => h.database.db.prisma.task.count({ where: { commentId } });

describe("Gitea deliveries across processes", () => {
  it("answers 401 to a forged signature and stores nothing", async () => {
    const issue = h.gitea.addIssue(REPO, "Forgery");
    const body = giteaJson({
      action: "created",
      issue,
      comment: { id: 987_654, body: "/agent implement", user: { id: 1, login: "alice" } },
      repository: h.gitea.repos.find("acme", "shop"),
      sender: { id: 1, login: "alice" },
      is_pull: false,
    });
    const forged = createHmac("sha256", "a guess").update(body).digest("hex");
    const res = await h.gitea.webhooks.postRaw({ "x-gitea-event": "issue_comment", "x-gitea-delivery": "f-1", "x-gitea-signature": forged }, body);
    expect(res.status).toBe(401);
    expect(await commandsOf(987_654)).toBe(0);
    expect(await h.database.db.prisma.webhookDelivery.count()).toBe(0);
  });

  it("turns 50 concurrent copies of one comment and a Redeliver into one command and one status comment", async () => {
    const issue = h.gitea.addIssue(REPO, "Copies").number!;
    // The first delivery is lost on the way; then 50 copies of it arrive at once, then a Redeliver.
    h.gitea.webhooks.dropNext(1);
    const { comment, deliveries } = await h.gitea.comment(REPO, issue, "alice", "/agent status");
    const copies = await Promise.all(Array.from({ length: 50 }, () => h.gitea.webhooks.redeliver(deliveries[0]!.uuid)));
    const statuses = copies.map((d) => d.status);
    expect(statuses.every((s) => s === 200 || s === 202)).toBe(true);
    // One accepted (unless the sweep, every 2 s, got there first), the rest duplicates.
    expect(statuses.filter((s) => s === 202).length).toBeLessThanOrEqual(1);
    const again = await h.gitea.webhooks.redeliver(deliveries[0]!.uuid);
    expect(again.status).toBe(200);
    expect(new Set([deliveries[0]!.uuid, again.uuid, ...copies.map((d) => d.uuid)]).size).toBe(52);
    // The accepted delivery's task is made just after its answer.
    const task = await vi.waitFor(() => h.database.db.prisma.task.findFirstOrThrow({ where: { commentId: comment.id! } }), { timeout: 20_000, interval: 50 });
    expect(await commandsOf(comment.id!)).toBe(1);
    await h.waitForStatus(task.id, "success");
    await h.waitForStatusComment(issue, task.id, ["✅ done", "Nothing is running or waiting here."]);
    expect(h.statusComments(issue, task.id)).toHaveLength(1);
  });

  it("takes in a comment whose delivery was dropped, through the sweep, once", async () => {
    const issue = h.gitea.addIssue(REPO, "Dropped").number!;
    h.gitea.webhooks.dropNext(1);
    const { comment, deliveries } = await h.gitea.comment(REPO, issue, "alice", "/agent status");
    expect(deliveries[0]!.dropped).toBe(true);
    const found = await vi.waitFor(
      async () => {
        const task = await h.database.db.prisma.task.findFirst({ where: { commentId: comment.id! } });
        if (!task) throw new Error(`the sweep has not taken in comment ${comment.id} yet`);
        return task;
      },
      { timeout: 30_000, interval: 100 },
    );
    await h.waitForStatus(found.id, "success");
    await h.waitForStatusComment(issue, found.id, ["✅ done"]);
    expect(await commandsOf(comment.id!)).toBe(1);
    expect(h.statusComments(issue, found.id)).toHaveLength(1);
  }, 60_000);
});

