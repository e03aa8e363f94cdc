import { commitToBare, reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV, GiteaE2eHarness, POSTMORTEM, REPO } from "./gitea-e2e-harness.ts";

/**
 * P6 on the Gitea door: a failed command gets its postmortem once, as a reply comment below its
 * status comment; when the postmortem agent cannot answer, the reply says so; a failure whose
 * cause is known (a rejected push) is explained plainly, without a model run. Services as
 * separate processes, real opencode on the scripted model, real git behind the fake Gitea.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  // A short refresh: the status comment is reconciled again and again, and the reply stays one.
  await h.start(["ingress", "dev", "notifier", "postmortem"], { GITEA_STATUS_REFRESH_MS: "300" });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

const replies = (issue: number, taskId: number) =>
  h.gitea.commentsOf(REPO, issue).filter((c) => (c.body ?? "").includes("ratatoskr:reply") && (c.body ?? "").includes(`#${taskId}`));

async function waitForReply(issue: number, taskId: number, text: string) {
  await expect
    .poll(() => replies(issue, taskId).some((c) => (c.body ?? "").includes(text)), { timeout: 90_000, interval: 100 })
    .toBe(true)
    .catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
}

describe("postmortem of a Gitea command (P6)", () => {
  it("replies once with why it failed and what to do, under the status comment, with the agent's text made inert", async () => {
    const issue = h.gitea.addIssue(REPO, "Nothing to change here", "it is fine").number!;
    h.model.addRule({ match: { systemIncludes: DEV, promptIncludes: "Nothing to change here" }, reply: [reply.json({ summary: "all fine already", done: true })] });
    h.model.addRule({
      match: { systemIncludes: POSTMORTEM, promptIncludes: "title: Nothing to change here" },
      reply: [
        reply.json({
          cause: "The developer agent found nothing to change, ask @bob <!-- ratatoskr:status task=1 -->",
          nextSteps: ["Say which file should change and comment /agent implement again"],
        }),
      ],
    });

    const task = await h.command(issue, "/agent implement");
    await h.waitForStatus(task.id, "failed");
    await waitForReply(issue, task.id, "Why command");

    const [posted] = replies(issue, task.id);
    expect(posted!.body).toContain(`🔍 **Why command #${task.id} failed**`);
    expect(posted!.body).toContain("The developer agent found nothing to change");
    expect(posted!.body).toContain("Say which file should change and comment /agent implement again");
    // No mention pages @bob and no forged marker makes it a status comment.
    expect(posted!.body).not.toContain("@bob");
    expect(posted!.body).not.toContain("<!-- ratatoskr:status");
    const all = h.gitea.commentsOf(REPO, issue);
    expect(all.indexOf(posted!)).toBeGreaterThan(all.indexOf(h.statusComments(issue, task.id)[0]!));

    // Recorded as posted (so no later reconcile posts it again); the model was asked once.
    await expect
      .poll(async () => (await h.database.db.prisma.notification.count({ where: { taskId: task.id, template: "task.postmortem", status: "sent" } })), { timeout: 10_000 })
      .toBe(1);
    expect(replies(issue, task.id)).toHaveLength(1);
    expect(h.model.requests.filter((r) => r.system.includes(POSTMORTEM) && !r.isToolResult)).toHaveLength(1);
  }, 180_000);

  it("says the postmortem is unavailable when its agent cannot answer", async () => {
    const issue = h.gitea.addIssue(REPO, "Still nothing to change", "really fine").number!;
    h.model.addRule({ match: { systemIncludes: DEV, promptIncludes: "Still nothing to change" }, reply: [reply.json({ summary: "nothing", done: true })] });
    h.model.addRule({ match: { systemIncludes: POSTMORTEM, promptIncludes: "title: Still nothing to change" }, reply: [reply.text("no idea, sorry")] });

    const task = await h.command(issue, "/agent implement");
    await h.waitForStatus(task.id, "failed");
    await waitForReply(issue, task.id, "is unavailable");
    expect(replies(issue, task.id)).toHaveLength(1);
  }, 180_000);

  it("explains a rejected push plainly, with the Gitea way to retry, without asking the postmortem agent", async () => {
    const title = "Race for the command branch";
    const issue = h.gitea.addIssue(REPO, title, "someone else pushes").number!;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write("acme/shop/mine.txt", "mine\n"), reply.json({ summary: "done", done: true }, { holdUntil: released })],
    });
    const task = await h.command(issue, "/agent implement");
    // While the agent works, someone else pushes the command's branch: the agent's push is refused.
    await expect.poll(() => h.model.requests.some((r) => r.isToolResult && r.userTexts.some((t) => t.includes(title))), { timeout: 60_000 }).toBe(true);
    await commitToBare(h.gitea.bareDir(REPO), `agent/issue-${issue}-${task.id}`, { "theirs.txt": "theirs\n" }, "someone else");
    release();

    expect((await h.waitForStatus(task.id, "failed")).failureReason).toMatch(/rejected: the remote branch moved/);
    await waitForReply(issue, task.id, "someone else pushed to the branch");
    const [posted] = replies(issue, task.id);
    expect(posted!.body).toContain(`🔍 **Why command #${task.id} failed**`);
    expect(posted!.body).toContain("merge or drop it, then comment the command again");
    expect(h.model.requests.filter((r) => r.system.includes(POSTMORTEM) && r.userTexts.some((t) => t.includes(title)))).toEqual([]);
    expect(await h.traces(task.id)).toEqual([expect.objectContaining({ agent: "dev" })]);
  }, 180_000);
});
