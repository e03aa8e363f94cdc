import { commitToBare, reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV, GiteaE2eHarness, REPO, REVIEWER } from "./gitea-e2e-harness.ts";

/**
 * G3 on pull requests across processes: `/agent iterate` on an agent PR resumes the dev and
 * reviewer sessions that made it and pushes one more reviewed commit; `/agent fix` on a person's
 * PR pushes exactly one commit on its head branch; iterate on a person's PR is refused.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

const pass = () => reply.json({ passed: true, summary: "good", findings: [] });

async function traceSessions(taskId: number) {
  const traces = await h.database.db.prisma.agentTrace.findMany({ where: { taskId }, orderBy: { id: "asc" } });
  return Object.fromEntries(traces.map((t) => [t.agent, t.sessionId]));
}

describe("commands on pull requests", () => {
  it("iterate on an agent PR resumes its dev and reviewer sessions and pushes one reviewed commit", async () => {
    const issue = h.gitea.addIssue(REPO, "Add a menu", "menu.txt listing drinks").number!;
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Add a menu" },
      reply: [reply.write("acme/shop/menu.txt", "coffee\n"), reply.json({ summary: "menu with coffee", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "Add a menu" }, reply: [pass()] });
    // Gitea stumbles while the PR is opened: listing answers 502 twice (retried by the client),
    // creating answers 503 once (never blindly re-posted: the job retries, looks first, then creates).
    h.gitea.injectFault({ method: "GET", path: /\/pulls$/, status: 502, times: 2 });
    h.gitea.injectFault({ method: "POST", path: /\/pulls$/, status: 503, times: 1 });
    const implement = await h.command(issue, "/agent implement");
    const opened = await h.waitForStatus(implement.id, "success");
    expect(h.gitea.issues.pulls(h.gitea.repos.find("acme", "shop")!).filter((p) => p.head?.ref === opened.branch)).toHaveLength(1);
    expect(h.gitea.requests.filter((r) => r.method === "POST" && r.path.endsWith("/pulls"))).toHaveLength(2);
    const pullNumber = Number(/\/pulls\/(\d+)$/.exec(opened.prUrl ?? "")?.[1]);
    const branch = opened.branch!;
    const before = (await h.git(["rev-parse", `refs/heads/${branch}`])).trim();

    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "add tea too" },
      reply: [reply.write("acme/shop/menu.txt", "coffee\ntea\n"), reply.json({ summary: "tea added", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "add tea too" }, reply: [pass()] });
    const iterate = await h.command(pullNumber, "/agent iterate add tea too");
    const done = await h.waitForStatus(iterate.id, "success");
    expect(done.branch).toBe(branch);

    // Same sessions as the implement that made the PR (G3 "resume the stored sessions").
    const made = await traceSessions(implement.id);
    const resumed = await traceSessions(iterate.id);
    expect(resumed.dev).toBe(made.dev);
    expect(resumed.reviewer).toBe(made.reviewer);

    // One more commit on the PR's branch, on top of the old head, never forced.
    expect(await h.git(["show", `refs/heads/${branch}:menu.txt`])).toBe("coffee\ntea\n");
    expect((await h.git(["log", "--format=%s", `${before}..refs/heads/${branch}`])).trim().split("\n")).toEqual(["agent: Add a menu"]);
    await expect(h.git(["merge-base", "--is-ancestor", before, `refs/heads/${branch}`])).resolves.toBe("");
    await h.waitForStatusComment(pullNumber, iterate.id, ["✅ done", "tea added"]);
  }, 180_000);

  it("fix on a person's PR pushes exactly one commit on its head; iterate there is refused", async () => {
    const bare = h.gitea.bareDir(REPO);
    const head = await commitToBare(bare, "feature/shout", { "shout.txt": "hello\n" }, "a person's change");
    const pull = h.gitea.addPull(REPO, { title: "Shout louder", body: "<!-- SECRET-INSTRUCTION -->Make it loud.", head: "feature/shout" }, "bob");

    const refused = await h.command(pull.number!, "/agent iterate please");
    expect((await h.waitForStatus(refused.id, "rejected")).failureReason).toContain("/agent fix");

    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "make it uppercase" },
      reply: [reply.write("acme/shop/shout.txt", "HELLO\n"), reply.json({ summary: "uppercased", testsRun: "cat shout.txt", done: true })],
    });
    const reviewsBefore = h.model.requests.filter((r) => r.system.includes(REVIEWER)).length;
    const fix = await h.command(pull.number!, "/agent fix make it uppercase");
    const done = await h.waitForStatus(fix.id, "success");

    expect(await h.git(["show", "refs/heads/feature/shout:shout.txt"])).toBe("HELLO\n");
    expect((await h.git(["log", "--format=%s", `${head}..refs/heads/feature/shout`])).trim().split("\n")).toEqual(["agent: fix Shout louder"]);
    const pushed = (await h.git(["rev-parse", "refs/heads/feature/shout"])).trim();
    expect(done.resultText).toContain(pushed.slice(0, 7));
    await h.waitForStatusComment(pull.number!, fix.id, ["✅ done", pushed.slice(0, 7), "uppercased"]);
    // One shot: no review, and the PR's hidden text never reached the agent.
    expect(h.model.requests.filter((r) => r.system.includes(REVIEWER)).length).toBe(reviewsBefore);
    const seen = h.model.requests.filter((r) => r.system.includes(DEV)).flatMap((r) => r.userTexts);
    expect(seen.some((t) => t.includes("Make it loud."))).toBe(true);
    expect(seen.some((t) => t.includes("SECRET-INSTRUCTION"))).toBe(false);
  }, 120_000);
});
