import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV, GiteaE2eHarness, REPO, REVIEWER } from "./gitea-e2e-harness.ts";

/**
 * G6 across processes: ingress and dev are killed while the dev agent of a command is mid-turn.
 * After the restart that command is failed with a clear reason (never replayed) and its session
 * interrupted; the command queued behind it on the same issue still runs to its PR.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

describe("restart mid-run", () => {
  it("fails the command that was mid-turn, interrupts its session, and runs the queued one", async () => {
    const issue = h.gitea.addIssue(REPO, "Restart me", "a file please").number!;
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "slowly" },
      reply: [reply.write("acme/shop/slow.txt", "half\n"), reply.json({ summary: "slow", done: true }, { delayMs: 170_000 })],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "quickly" },
      reply: [reply.write("acme/shop/quick.txt", "done\n"), reply.json({ summary: "quick", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "quickly" }, reply: [reply.json({ passed: true, summary: "ok", findings: [] })] });

    const first = await h.command(issue, "/agent implement slowly");
    const second = await h.command(issue, "/agent implement quickly");
    await h.waitForStatus(first.id, "running");
    await h.waitForStatus(second.id, "queued");
    await expect
      .poll(() => h.model.requests.some((r) => r.isToolResult && r.userTexts.some((t) => t.includes("slowly"))), { timeout: 60_000 })
      .toBe(true);
    const sessionId = (await h.task(first.id)).agentSessionId!;

    // Both die at once, mid-turn; new processes take over.
    await Promise.all(["ingress", "dev"].map((name) => h.running.get(name)!.stop("SIGKILL")));
    for (const name of ["ingress", "dev"] as const) h.running.set(name, await h.startService(name));

    const failed = await h.waitForStatus(first.id, "failed", 150_000);
    expect(failed.failureReason).toMatch(/mid-turn/);
    expect(failed.failureReason).toMatch(/not replayed/);
    // The dead run's model call was cut off by the interrupt, not left to finish (its reply waits 170 s).
    await expect
      .poll(
        () => {
          const calls = h.model.requests.filter((r) => r.sessionId === sessionId && r.isToolResult);
          return calls.length > 0 && calls.every((r) => r.aborted);
        },
        { timeout: 30_000 },
      )
      .toBe(true);

    const done = await h.waitForStatus(second.id, "succeeded", 120_000);
    expect(done.prUrl).toContain("/pulls/");
    expect(await h.git(["show", `refs/heads/agent/issue-${issue}-${second.id}:quick.txt`])).toBe("done\n");
    // The half-done turn was never replayed: one dev call chain for the first command, nothing pushed.
    const slowCalls = h.model.requests.filter((r) => r.system.includes(DEV) && r.userTexts.some((t) => t.includes("slowly")) && !r.isToolResult);
    expect(slowCalls).toHaveLength(1);
    await expect(h.git(["rev-parse", "--verify", "-q", `refs/heads/agent/issue-${issue}-${first.id}`])).rejects.toThrow();
    await h.waitForStatusComment(issue, first.id, ["❌ failed", "mid-turn"]);
  }, 330_000);
});
