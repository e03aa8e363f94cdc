import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV, GiteaE2eHarness, PLANNER, REPO, REVIEWER } from "./gitea-e2e-harness.ts";

/**
 * G3–G5, G7 across processes: plan → discuss → iterate → implement on one issue run strictly in
 * order (the plan through two plan-review rounds) while a plan on another issue runs alongside;
 * `/agent status` lists the line; a status comment deleted mid-run is recreated once; two
 * notifier replicas never make two status comments for one command.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  await h.start(["ingress", "analyst", "dev", "reviewer", "notifier"]);
  // A second notifier replica: status comments must still be one per command (G5).
  h.running.set("notifier-2", await h.startService("notifier"));
}, 180_000);

afterAll(async () => {
  await h.stop();
});

const verdict = (passed: boolean, text = "") => reply.json({ passed, summary: passed ? "good" : "no", findings: passed ? [] : [{ severity: "major", file: null, text }] });

async function timesOf(taskId: number) {
  const events = await h.database.db.prisma.taskEvent.findMany({ where: { taskId }, orderBy: { version: "asc" } });
  const started = events.find((e) => e.toStatus === "running")!.createdAt.getTime();
  const ended = events.find((e) => e.fromStatus === "running" && e.toStatus !== "running")!.createdAt.getTime();
  return { started, ended };
}

describe("commands of one issue, in order", () => {
  it("plan → discuss → iterate → implement in order while another issue runs; the PR follows the iterated plan", async () => {
    const cart = h.gitea.addIssue(REPO, "Plan the cart", "The shop needs a cart file.").number!;
    const other = h.gitea.addIssue(REPO, "Other issue", "Something else entirely.").number!;
    h.model.addRule({
      match: { systemIncludes: PLANNER, promptIncludes: "`/agent plan` by @alice on acme/shop#" + cart },
      reply: [reply.json({ plan: "PLAN-V1: add cart.txt", reply: "drafted" }, { delayMs: 3_000 }), reply.json({ plan: "PLAN-V2: add cart.txt with an empty cart", reply: "revised" })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "PLAN-V1" }, reply: [verdict(false, "say what the cart holds")] });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "PLAN-V2" }, reply: [verdict(true)] });
    h.model.addRule({
      match: { systemIncludes: PLANNER, promptIncludes: "`/agent discuss`" },
      reply: [reply.json({ plan: "PLAN-V2: add cart.txt with an empty cart", reply: "ANSWER: only cart.txt changes" })],
    });
    h.model.addRule({ match: { systemIncludes: PLANNER, promptIncludes: "`/agent iterate`" }, reply: [reply.json({ plan: "PLAN-V3: add cart.txt with a total line", reply: "ok" })] });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "PLAN-V3" }, reply: [verdict(true)] });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "PLAN-V3" },
      reply: [reply.write("acme/shop/cart.txt", "total: 0\n"), reply.json({ summary: "cart.txt with a total", testsRun: "none", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "+total: 0" }, reply: [verdict(true)] });
    h.model.addRule({ match: { systemIncludes: PLANNER, promptIncludes: "Other issue" }, reply: [reply.json({ plan: "OTHER-PLAN", reply: "ok" }, { delayMs: 4_000 })] });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "OTHER-PLAN" }, reply: [verdict(true)] });

    const plan = await h.command(cart, "/agent plan");
    const discuss = await h.command(cart, "/agent discuss which files change?");
    const iterate = await h.command(cart, "/agent iterate add a total line");
    const implement = await h.command(cart, "/agent implement");
    const elsewhere = await h.command(other, "/agent plan");

    // While the plan runs, the others wait in line and /agent status says so (G7).
    await h.waitForStatus(plan.id, "running");
    await h.waitForStatusComment(cart, implement.id, ["🕒 queued — position 3"]);
    const status = await h.command(cart, "/agent status");
    const listing = (await h.waitForStatus(status.id, "success")).resultText ?? "";
    expect(listing).toContain(`▶ running: \`plan\` (#${plan.id})`);
    expect(listing).toContain(`1. waiting: \`discuss\` (#${discuss.id})`);
    expect(listing).toContain(`3. waiting: \`implement\` (#${implement.id})`);

    // The other issue's status comment is deleted while its plan runs: recreated, once (G5).
    await h.waitForStatus(elsewhere.id, "running");
    const first = await h.waitForStatusComment(other, elsewhere.id, ["▶️ running"]);
    h.gitea.deleteComment(REPO, first.id!);

    const done = await h.waitForStatus(implement.id, "success", 150_000);
    await h.waitForStatus(elsewhere.id, "success");
    await h.waitForStatusComment(other, elsewhere.id, ["✅ done"]);
    const recreated = h.statusComments(other, elsewhere.id);
    expect(recreated).toHaveLength(1);
    expect(recreated[0]!.id).not.toBe(first.id);

    // Every command of the issue has exactly one status comment, with two notifiers at work.
    for (const t of [plan, discuss, iterate, implement, status]) expect(h.statusComments(cart, t.id)).toHaveLength(1);

    // Strict order on the issue, each starting after the previous ended; the other issue overlapped (G4).
    const times = await Promise.all([plan, discuss, iterate, implement].map((t) => timesOf(t.id)));
    for (let i = 1; i < times.length; i++) expect(times[i]!.started).toBeGreaterThanOrEqual(times[i - 1]!.ended);
    const side = await timesOf(elsewhere.id);
    expect(side.started).toBeLessThan(times[0]!.ended);

    // The plan went through two review rounds; plans and the answer are posted as comments (G3).
    expect((await h.task(plan.id)).round).toBe(2);
    const bodies = h.gitea.commentsOf(REPO, cart).map((c) => c.body ?? "");
    expect(bodies.filter((b) => b.includes("PLAN-V2") && b.includes("reviewed in 2 rounds"))).toHaveLength(1);
    expect(bodies.filter((b) => b.includes("ANSWER: only cart.txt changes"))).toHaveLength(1);
    expect(bodies.filter((b) => b.includes("PLAN-V3"))).toHaveLength(1);
    expect(bodies.some((b) => b.includes("OTHER-PLAN"))).toBe(false);

    // implement followed the iterated plan and opened the PR with the change.
    const branch = `agent/issue-${cart}-${implement.id}`;
    expect(await h.git(["show", `refs/heads/${branch}:cart.txt`])).toBe("total: 0\n");
    expect(done.prUrl).toContain("/pulls/");
    const devPrompts = h.model.requests.filter((r) => r.system.includes(DEV)).flatMap((r) => r.userTexts);
    expect(devPrompts.some((t) => t.includes("PLAN-V3: add cart.txt with a total line"))).toBe(true);
  }, 240_000);
});
