import { randomUUID } from "node:crypto";
import { giteaJson } from "@ratatoskr/testkit";
import { signBody } from "@ratatoskr/gitea";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createCommandAcceptor } from "../src/gitea/store/command-acceptor.ts";
import { GiteaHarness, REPO, SECRET, WAIT } from "./support/gitea-harness.ts";

let h: GiteaHarness;

beforeAll(async () => {
  // The sweep names the repository as an operator may type it: one comment is still one command.
  h = await GiteaHarness.start({ GITEA_REPOS: "Acme/Web", GITEA_SWEEP_INTERVAL_MS: "300" });
  h.gitea.addIssue(REPO, "Webhook issue");
});
afterAll(async () => {
  await h?.stop();
});

function payload(commentId: number, body: string, author = "alice") {
  return {
    action: "created",
    issue: { id: 1, number: 1, title: "Webhook issue", pull_request: null },
    comment: { id: commentId, body, user: { id: 9, login: author }, html_url: "x" },
    repository: { id: 1, name: "web", full_name: REPO, owner: { id: 2, login: "acme" } },
    sender: { id: 9, login: author },
    is_pull: false,
  };
}

function headers(body: string, extra: Record<string, string> = {}) {
  return {
    "x-gitea-event": "issue_comment",
    "x-gitea-event-type": "issue_comment",
    "x-gitea-delivery": randomUUID(),
    "x-gitea-signature": signBody(body, SECRET),
    ...extra,
  };
}

const taskCount = () => h.prisma.task.count();

describe("POST /webhooks/gitea", () => {
  it("answers 401 to a forged or missing signature and stores nothing", async () => {
    const body = giteaJson(payload(900_001, "/agent plan"));
    const before = await taskCount();
    const forged = await h.gitea.webhooks.postRaw(
      headers(body, { "x-gitea-signature": signBody(body, "guess") }),
      body,
    );
    const missing = await h.gitea.webhooks.postRaw({ "x-gitea-event": "issue_comment" }, body);
    const reserialised = await h.gitea.webhooks.postRaw(headers(JSON.stringify(JSON.parse(body))), body);
    expect([forged.status, missing.status, reserialised.status]).toEqual([401, 401, 401]);
    expect(await taskCount()).toBe(before);
    expect(await h.prisma.webhookDelivery.count({ where: { commentId: 900_001n } })).toBe(0);
  });

  it("answers 204 to what is not a new /agent comment and 400 to broken JSON, never 5xx", async () => {
    const before = await taskCount();
    const cases: [Record<string, string>, string][] = [
      [{}, giteaJson(payload(900_002, "just a remark"))],
      [{}, giteaJson(payload(900_003, "/agent plan", h.gitea.botLogin))],
      [{}, giteaJson({ ...payload(900_004, "/agent plan"), action: "edited" })],
      [{}, giteaJson({ ...payload(900_005, "/agent plan"), action: "deleted" })],
      [{ "x-gitea-event": "push" }, giteaJson({ ref: "refs/heads/main" })],
      [
        { "x-gitea-event": "pull_request_comment", "x-gitea-event-type": "pull_request_review_comment" },
        giteaJson({ action: "reviewed", review: { content: "/agent fix" } }),
      ],
    ];
    for (const [extra, body] of cases) {
      const res = await h.gitea.webhooks.postRaw(headers(body, extra), body);
      expect(res.status, body.slice(0, 80)).toBe(204);
    }
    const broken = '{"action": "created", ';
    const res = await h.gitea.webhooks.postRaw(headers(broken), broken);
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/Unexpected|position|SyntaxError/);
    expect(await taskCount()).toBe(before);
  });

  it("answers 400 to a comment event without its comment, decided by the event type, not the missing field", async () => {
    const noComment = giteaJson({ action: "created", repository: { name: "web" } });
    const nullComment = giteaJson({ ...payload(900_009, "/agent plan"), comment: null });
    for (const body of [noComment, nullComment]) {
      const res = await h.gitea.webhooks.postRaw(headers(body), body);
      expect(res.status, body.slice(0, 80)).toBe(400);
    }
    // A PR review is a real delivery without `comment`: its own event type, 204.
    const review = giteaJson({ action: "reviewed", review: { content: "/agent fix" } });
    const reviewed = await h.gitea.webhooks.postRaw(
      headers(review, { "x-gitea-event": "pull_request_comment", "x-gitea-event-type": "pull_request_review_comment" }),
      review,
    );
    expect(reviewed.status).toBe(204);
  });

  it("answers 400 to a delivery nested past any real payload, never 5xx", async () => {
    const deep = giteaJson(payload(900_010, "/agent plan")).replace(
      '"is_pull": false',
      `"is_pull": false, "x": ${"[".repeat(5_000)}${"]".repeat(5_000)}`,
    );
    const res = await h.gitea.webhooks.postRaw(headers(deep), deep);
    expect(res.status).toBe(400);
    expect(await h.prisma.task.count({ where: { commentId: 900_010n } })).toBe(0);
  });

  it("answers 422 to a comment no Gitea sends (ids out of range, empty names) and stores a NUL-laden one without it", async () => {
    const before = await taskCount();
    const outOfRange = payload(900_006, "/agent plan");
    outOfRange.issue.number = 2_147_483_648;
    const unnamed = payload(900_007, "/agent plan");
    unnamed.repository.name = "\u0000";
    for (const body of [giteaJson(outOfRange), giteaJson(unnamed)]) {
      const res = await h.gitea.webhooks.postRaw(headers(body), body);
      expect(res.status, body.slice(0, 80)).toBe(422);
      expect(res.text).toMatch(/invalid comment payload/);
    }
    expect(await taskCount()).toBe(before);
    const nul = giteaJson(payload(900_008, "/agent discuss with a \u0000 byte"));
    const res = await h.gitea.webhooks.postRaw(headers(nul), nul);
    expect(res.status).toBe(202);
    expect((await h.taskOfComment(900_008)).commandMessage).toBe("with a  byte");
  });

  it("accepts a comment once: Redeliver under a new UUID answers 200 and changes nothing", async () => {
    const { comment, deliveries } = await h.gitea.comment(REPO, 1, "alice", "/agent status");
    expect(deliveries[0]?.status).toBe(202);
    const again = await h.gitea.webhooks.redeliver(deliveries[0]!.uuid);
    expect(again.uuid).not.toBe(deliveries[0]!.uuid);
    expect(again.status).toBe(200);
    const task = await h.taskOfComment(comment.id!);
    await h.waitForStatus(task.id, "success");
    expect(await h.prisma.task.count({ where: { commentId: BigInt(comment.id!) } })).toBe(1);
  });

  it("turns 50 concurrent deliveries of one comment into one command and one status comment", async () => {
    const body = giteaJson(payload(900_050, "/agent status"));
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => h.gitea.webhooks.postRaw(headers(body), body)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    const task = await h.taskOfComment(900_050);
    await h.waitForStatus(task.id, "success");
    await h.waitForStatusComment(1, task.id, "✅ done");
    expect(h.statusComments(1, task.id)).toHaveLength(1);
  });

  it("takes in a comment whose delivery was dropped, through the sweep", async () => {
    h.gitea.webhooks.dropNext(1);
    const { comment, deliveries } = await h.gitea.comment(REPO, 1, "alice", "/agent status");
    expect(deliveries[0]?.dropped).toBe(true);
    const task = await h.taskOfComment(comment.id!);
    await h.waitForStatus(task.id, "success");
    const delivery = await h.prisma.webhookDelivery.findFirst({ where: { commentId: BigInt(comment.id!) } });
    expect(delivery?.deliveryId).toBe(`sweep-acme/web:${comment.id}`);
    // The sweep passes again and again: still one command.
    await vi.waitFor(async () => {
      const cursor = await h.prisma.giteaSweepCursor.findFirst();
      expect(cursor?.lastCommentId).toBeGreaterThanOrEqual(BigInt(comment.id!));
    }, WAIT);
    expect(await h.prisma.task.count({ where: { commentId: BigInt(comment.id!) } })).toBe(1);
  });

  it("keys a comment by its repository and its id: the same id in two repositories is two commands", async () => {
    h.gitea.addRepo("acme/api");
    h.gitea.setPermission("acme/api", "alice", "write");
    h.gitea.addIssue("acme/api", "Api issue");
    const inRepo = (commentId: number, owner: string, name: string) => {
      const p = payload(commentId, "/agent status");
      p.repository = { id: 3, name, full_name: `${owner}/${name}`, owner: { id: 2, login: owner } };
      return giteaJson(p);
    };
    for (const body of [giteaJson(payload(900_100, "/agent status")), inRepo(900_100, "acme", "api")]) {
      expect((await h.gitea.webhooks.postRaw(headers(body), body)).status).toBe(202);
    }
    // Without X-Gitea-Delivery too: the id made for the delivery names the repository as well.
    const unnamed = (body: string) => {
      const { "x-gitea-delivery": _id, ...rest } = headers(body);
      return h.gitea.webhooks.postRaw(rest, body);
    };
    expect((await unnamed(giteaJson(payload(900_101, "/agent status")))).status).toBe(202);
    expect((await unnamed(inRepo(900_101, "acme", "api"))).status).toBe(202);
    // Gitea's names are case-insensitive: the same repository spelled otherwise is the same comment.
    expect((await unnamed(inRepo(900_101, "Acme", "API"))).status).toBe(200);
    await vi.waitFor(async () => {
      for (const commentId of [900_100n, 900_101n]) {
        const tasks = await h.prisma.task.findMany({ where: { commentId }, orderBy: { id: "asc" } });
        expect(tasks.map((t) => `${t.repoOwner}/${t.repoName}`)).toEqual(["acme/web", "acme/api"]);
      }
    }, WAIT);
  });

  it("spends no task id on duplicate deliveries: 30 redeliveries later the next command is the next id", async () => {
    const first = await h.command(1, "/agent status");
    const delivery = h.gitea.webhooks.deliveries.find((d) => d.body.includes(`"id": ${first.commentId}`))!;
    for (let i = 0; i < 30; i++) expect((await h.gitea.webhooks.redeliver(delivery.uuid)).status).toBe(200);
    const next = await h.command(1, "/agent status");
    expect(next.id).toBe(first.id + 1);
  });

  it("makes the task of a command stored just before the process died (no task row yet), from the stored delivery", async () => {
    // What the route wrote before answering 202, by a process killed right after: the row alone.
    const dead = createCommandAcceptor(h.database.db.pool, 3);
    const outcome = await dead({
      owner: "acme",
      repo: "web",
      target: "issue",
      number: 1,
      commentId: 900_150,
      author: "alice",
      kind: "status",
      message: "",
      deliveryId: randomUUID(),
      event: "issue_comment",
    });
    expect(outcome).toEqual({ status: "accepted" });
    const task = await h.taskOfComment(900_150);
    await h.waitForStatus(task.id, "success");
    await h.waitForStatusComment(1, task.id, "✅ done");
  });

  it("treats an edit alike on both paths: a remark edited into /agent plan is no command, via webhook or sweep", async () => {
    const { comment, deliveries } = await h.gitea.comment(REPO, 1, "alice", "just a remark");
    expect(deliveries[0]?.status).toBe(204);
    const edits = await h.gitea.editComment(REPO, comment.id!, "/agent plan");
    expect(edits[0]?.status).toBe(204);
    const editedAt = new Date();
    // Two sweep passes that began after the edit read it (the sweep reads comments updated since its cursor).
    for (let pass = 0; pass < 2; pass++) {
      const after = pass === 0 ? editedAt : new Date();
      await vi.waitFor(async () => {
        const cursor = await h.prisma.giteaSweepCursor.findFirst();
        expect(cursor?.sweptAt.getTime()).toBeGreaterThan(after.getTime() + 50);
      }, WAIT);
    }
    expect(await h.prisma.task.count({ where: { commentId: BigInt(comment.id!) } })).toBe(0);
  });

  it("accepts 40 different comments posted at once, each once and as its own task, their repeats as duplicates", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => 900_200 + i);
    // Last in this file: its 40 commands queue on issue 1 behind nothing the other tests wait for.
    // Every comment twice, interleaved, so repeats land in the same written batch and in later ones.
    const bodies = [...ids, ...ids].map((id) => ({
      id,
      body: giteaJson(payload(id, `/agent discuss batch ${id}`)),
    }));
    const answers = await Promise.all(
      bodies.map(async ({ id, body }) => ({ id, res: await h.gitea.webhooks.postRaw(headers(body), body) })),
    );
    for (const id of ids) {
      const mine = answers
        .filter((a) => a.id === id)
        .map((a) => a.res.status)
        .sort();
      expect(mine, `comment ${id}`).toEqual([200, 202]);
    }
    await vi.waitFor(async () => {
      const tasks = await h.prisma.task.findMany({ where: { commentId: { in: ids.map(BigInt) } } });
      expect(tasks.map((t) => [Number(t.commentId), t.commandMessage]).sort()).toEqual(
        ids.map((id) => [id, `batch ${id}`]),
      );
    }, WAIT);
  });
});
