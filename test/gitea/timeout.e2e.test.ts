import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV, GiteaE2eHarness, REPO, REVIEWER } from "./gitea-e2e-harness.ts";

/**
 * P4 on the Gitea door, as on Telegram (one pipeline): a dev run that goes idle is stopped, its
 * work so far is committed and pushed, the command ends `timeout` (its issue's line moves on),
 * and `/agent continue` resumes the very same opencode session to a reviewed PR.
 */
const h = new GiteaE2eHarness();
const IDLE_MS = 6_000;

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"], { DEV_IDLE_TIMEOUT_MS: String(IDLE_MS) });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

describe("a Gitea command's dev timeout", () => {
  it("pushes the partial work, ends timeout, and /agent continue finishes it in the same session", async () => {
    const title = "Write slowly on the issue";
    const issue = h.gitea.addIssue(REPO, title, "two files").number!;
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "your previous run stopped before it finished" },
      reply: [reply.write("acme/shop/second.txt", "second\n"), reply.json({ summary: "finished", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      // After the first file the model goes silent far longer than the idle timeout.
      reply: [reply.write("acme/shop/first.txt", "first\n"), reply.json({ summary: "late", done: true }, { delayMs: 120_000 })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });

    const task = await h.command(issue, "/agent implement");
    const timedOut = await h.waitForStatus(task.id, "timeout");
    const branch = `agent/issue-${issue}-${task.id}`;
    expect(await h.git(["show", `refs/heads/${branch}:first.txt`])).toBe("first\n");
    await h.waitForStatusComment(issue, task.id, ["⏱️ timed out", branch, "/agent continue"]);
    expect(timedOut.prUrl).toBeNull();
    const [stopped] = await h.database.db.prisma.agentTrace.findMany({ where: { taskId: task.id }, orderBy: { id: "asc" } });
    expect(stopped).toMatchObject({ agent: "dev", outcome: "timeout" });

    // Its line moved on: a status command is answered and lists nothing running.
    const status = await h.command(issue, "/agent status");
    await h.waitForStatusComment(issue, status.id, ["Nothing is running or waiting here."]);

    const more = await h.command(issue, "/agent continue");
    await h.waitForStatusComment(issue, more.id, [`Continued \`implement\` (#${task.id})`]);
    const done = await h.waitForStatus(task.id, "success");
    expect(await h.git(["show", `refs/heads/${branch}:second.txt`])).toBe("second\n");
    const pull = h.gitea.issues.pulls(h.gitea.repos.find("acme", "shop")!).find((p) => p.head?.ref === branch);
    expect(pull?.body).toContain(`Closes #${issue}`);
    expect(done.prUrl).toBe(pull?.html_url);

    const traces = await h.database.db.prisma.agentTrace.findMany({ where: { taskId: task.id }, orderBy: { id: "asc" } });
    expect(traces.map((t) => t.agent)).toEqual(["dev", "dev", "reviewer"]);
    expect(traces[1]!.sessionId).toBe(stopped!.sessionId);
    await h.waitForStatusComment(issue, task.id, ["✅ done", pull!.html_url!]);

    // A second continue finds nothing to continue.
    const again = await h.command(issue, "/agent continue");
    await h.waitForStatusComment(issue, again.id, ["Nothing here to continue"]);
  }, 180_000);
});
