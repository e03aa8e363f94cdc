import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV, GiteaE2eHarness, REPO, REVIEWER } from "./gitea-e2e-harness.ts";

/**
 * A process killed mid-run, on the Gitea door as on Telegram (one rule for every door): ingress
 * and dev are killed while the dev agent of a command is mid-turn. The retried job resumes the
 * dead attempt's session (never a second session beside it), the round is pushed once, the
 * command opens its PR, and the command queued behind it on the same issue gets its turn after it.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

describe("restart mid-run", () => {
  it("resumes the command that was mid-turn in its own session, then gives the queued one its turn", async () => {
    const issue = h.gitea.addIssue(REPO, "Restart me", "a file please").number!;
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "slowly" },
      // The first attempt writes a file, then its process dies while the model thinks.
      reply: [reply.write("acme/shop/slow.txt", "half\n"), reply.json({ summary: "never seen", done: true }, { delayMs: 170_000 })],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "slowly" },
      reply: [reply.write("acme/shop/rest.txt", "rest\n"), reply.json({ summary: "both halves", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER }, reply: [reply.json({ passed: true, summary: "ok", findings: [] })] });

    const first = await h.command(issue, "/agent implement slowly");
    const second = await h.command(issue, "/agent implement quickly");
    await h.waitForStatus(first.id, "running");
    await h.waitForStatus(second.id, "queued");
    await expect
      .poll(() => h.model.requests.some((r) => r.isToolResult && r.userTexts.some((t) => t.includes("slowly"))), { timeout: 60_000 })
      .toBe(true);
    const sessionId = (await h.task(first.id)).agentSessionId!;
    const stuck = h.model.requests.find((r) => r.sessionId === sessionId && r.isToolResult)!;

    // Both die at once, mid-turn; new processes take over.
    await Promise.all(["ingress", "dev"].map((name) => h.running.get(name)!.stop("SIGKILL")));
    for (const name of ["ingress", "dev"] as const) h.running.set(name, await h.startService(name));

    const done = await h.waitForStatus(first.id, "success", 200_000);
    expect(done.prUrl).toContain("/pulls/");
    // One session for the step: the dead attempt's run closed as interrupted, the retry went on in it.
    const devRuns = (await h.traces(first.id)).filter((t) => t.agent === "dev");
    expect(devRuns.map((t) => [t.round, t.outcome, t.sessionId])).toEqual([
      [1, "interrupted", sessionId],
      [1, "completed", sessionId],
    ]);
    // The dead attempt's model call was hung up on, and the resumed run asked only after that.
    await expect.poll(() => stuck.aborted, { timeout: 30_000 }).toBe(true);
    const resumed = h.model.requests.filter((r) => r.sessionId === sessionId && r.seq > stuck.seq);
    expect(resumed.length).toBeGreaterThan(0);
    for (const request of resumed) expect(request.receivedAt).toBeGreaterThanOrEqual(stuck.abortedAt!);
    // Both halves are on the branch, pushed as one round.
    const branch = `refs/heads/agent/issue-${issue}-${first.id}`;
    expect(await h.git(["show", `${branch}:slow.txt`])).toBe("half\n");
    expect(await h.git(["show", `${branch}:rest.txt`])).toBe("rest\n");
    expect((await h.git(["log", "--format=%s", `main..${branch}`])).trim().split("\n")).toEqual(["agent: Restart me"]);

    // The command queued behind it took its turn once the first ended: refused, since the
    // first one's PR is open now, and saying where to go instead.
    const next = await h.waitForStatus(second.id, "rejected", 60_000);
    expect(next.failureReason ?? next.resultText ?? "").toContain("already open");
    await h.waitForStatusComment(issue, first.id, ["✅ done"]);
  }, 400_000);
});
