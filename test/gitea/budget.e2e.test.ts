import { reply, scriptedCost } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV, GiteaE2eHarness, REPO, REVIEWER } from "./gitea-e2e-harness.ts";

/**
 * P5 on the Gitea door, as on Telegram (one pipeline): a command's spend is watched while its
 * dev agent runs; past the budget the run is stopped, its work pushed, and the command pauses
 * at the head of its issue's line. `/agent continue [+USD]` resumes it in the same session;
 * `/agent stop` ends it and frees the line. The spend is real: the scripted model reports its
 * usage and the testkit's opencode config prices it.
 */
const h = new GiteaE2eHarness();
/** Less than one request of the scripted model costs: a command's first step passes it. */
const BUDGET_USD = "0.0001";

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"], { TASK_BUDGET_USD: BUDGET_USD });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

function slowDevRule(title: string, files: { first: string; second: string }) {
  h.model.addRule({
    match: { systemIncludes: DEV, promptIncludes: title },
    reply: [
      reply.write(`acme/shop/${files.first}`, "first\n"),
      // The budget is passed by the first step; the run is stopped while this one waits.
      { ...reply.write("acme/shop/never.txt", "never\n"), delayMs: 30_000 },
      reply.write(`acme/shop/${files.second}`, "second\n"),
      reply.json({ summary: `added ${files.first} and ${files.second}`, done: true }),
    ],
  });
}

async function files(branch: string): Promise<string[]> {
  return (await h.git(["ls-tree", "-r", "--name-only", `refs/heads/${branch}`])).trim().split("\n");
}

describe("a Gitea command's budget", () => {
  it("pauses a run past its budget with its work pushed; /agent continue +USD resumes the same session to the PR", async () => {
    const title = "Spend on the issue";
    const issue = h.gitea.addIssue(REPO, title, "two files").number!;
    slowDevRule(title, { first: "first.txt", second: "second.txt" });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });

    const task = await h.command(issue, "/agent implement");
    const paused = await h.waitForStatus(task.id, "paused");
    expect(paused).toMatchObject({ pausedStep: "continue", budgetUsd: Number(BUDGET_USD) });
    const branch = `agent/issue-${issue}-${task.id}`;
    expect(await files(branch)).toContain("first.txt");
    const [stopped] = await h.database.db.prisma.agentTrace.findMany({ where: { taskId: task.id }, orderBy: { id: "asc" } });
    expect(stopped).toMatchObject({ agent: "dev", outcome: "cancelled" });
    expect(stopped!.cost).toBeGreaterThan(Number(BUDGET_USD));
    await h.waitForStatusComment(issue, task.id, ["⏸️ paused", "of a $0.0001 budget", "/agent continue [+USD]", "/agent stop", branch]);

    // /agent status lists it as holding the issue's line.
    const status = await h.command(issue, "/agent status");
    await h.waitForStatusComment(issue, status.id, ["⏸ paused by its budget", `(#${task.id})`]);

    const more = await h.command(issue, "/agent continue +1");
    await h.waitForStatusComment(issue, more.id, [`Continued \`implement\` (#${task.id}) with a budget of $1.00`]);
    const done = await h.waitForStatus(task.id, "success");
    expect(done.budgetUsd).toBeCloseTo(1, 2);
    expect(await files(branch)).toEqual(expect.arrayContaining(["first.txt", "second.txt"]));
    expect(await files(branch)).not.toContain("never.txt");
    const pull = h.gitea.issues.pulls(h.gitea.repos.find("acme", "shop")!).find((p) => p.head?.ref === branch);
    expect(pull?.body).toContain(`Closes #${issue}`);

    // The continue went on in the session that holds the run's context, and was not paid twice.
    const traces = await h.database.db.prisma.agentTrace.findMany({ where: { taskId: task.id }, orderBy: { id: "asc" } });
    expect(traces.map((t) => t.agent)).toEqual(["dev", "dev", "reviewer"]);
    expect(traces[1]!.sessionId).toBe(stopped!.sessionId);
    const reported = h.model.requests.filter((r) => traces.some((t) => t.sessionId === r.sessionId) && r.usage);
    expect(traces.reduce((usd, t) => usd + t.cost, 0)).toBeCloseTo(reported.reduce((usd, r) => usd + scriptedCost(r.usage!), 0), 9);
  }, 180_000);

  it("/agent stop ends a paused command, keeps what it pushed and lets the next command of the issue start", async () => {
    const title = "Stop on the issue";
    const issue = h.gitea.addIssue(REPO, title, "stop me").number!;
    slowDevRule(title, { first: "kept.txt", second: "later.txt" });
    const task = await h.command(issue, "/agent implement");
    await h.waitForStatus(task.id, "paused");

    // The next command waits behind the paused one.
    const next = await h.command(issue, "/agent implement again");
    await h.waitForStatus(next.id, "queued");
    await h.waitForStatusComment(issue, next.id, ["🕒 queued — position 1"]);

    const stop = await h.command(issue, "/agent stop");
    await h.waitForStatusComment(issue, stop.id, [`Stopped \`implement\` (#${task.id})`]);
    const stopped = await h.waitForStatus(task.id, "cancelled");
    expect(stopped.failureReason).toContain("stopped by @alice with `/agent stop`");
    await h.waitForStatusComment(issue, task.id, ["⏹️ cancelled", "/agent stop"]);
    expect(await files(`agent/issue-${issue}-${task.id}`)).toContain("kept.txt");

    // The line is free: the waiting command starts (and meets the same small budget).
    await h.waitForStatus(next.id, "paused");

    // A wrong amount is answered, and changes nothing.
    const wrong = await h.command(issue, "/agent continue lots");
    await h.waitForStatusComment(issue, wrong.id, ["`lots` is not an amount"]);
    expect((await h.task(next.id)).status).toBe("paused");
  }, 180_000);
});
