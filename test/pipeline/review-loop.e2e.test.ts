import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { commitToBare, reply, type ModelRequest } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATS, DEV, PipelineHarness, REVIEWER, waitFor } from "./pipeline-harness.ts";

/** The dev agent's prompt of one round of one task (the title is in its own fenced block). */
const devRound = (round: number, max: number, title: string) => (req: ModelRequest) =>
  req.system.includes(DEV) && req.userTexts.some((t) => t.includes(`round ${round} of at most ${max}.`) && t.includes(title));

/**
 * P1–P3, P7 across processes: an approved task is implemented by the dev agent through real tool
 * calls, committed and pushed to the bare remote, reviewed (one or more rounds), and the person
 * is told each step once, in order. Also what must fail clearly: rounds run out, nothing changed,
 * a push the remote rejects; and /cancel while the agent works.
 */
const h = new PipelineHarness();

/** A task's entries in a step's workspace (its trees and their state), none once removed. */
async function treesOf(step: "dev" | "review", taskId: number): Promise<string[]> {
  const root = join(h.root, "workspaces", step);
  const list = (dir: string) => readdir(join(root, dir)).catch(() => [] as string[]);
  return [...(await list("tasks")), ...(await list("state"))].filter((name) => name === String(taskId) || name.startsWith(`${taskId}-`));
}

beforeAll(async () => {
  // An ended task's trees go at once (WORKSPACE_RETENTION_MS=0), looked for every 200 ms.
  await h.start(["ingress", "dev", "reviewer", "notifier"], { WORKSPACE_RETENTION_MS: "0", WORKSPACE_SWEEP_INTERVAL_MS: "200" });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

describe("approved work becomes reviewed, pushed code", () => {
  it("one review round: the agent's edit is pushed on the task branch and the person hears each step once, in order", async () => {
    const chat = CHATS[0]!;
    await h.repo("acme/shop");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Add a greeting file" },
      reply: [
        reply.write("acme/shop/greeting.txt", "Hello from Ratatoskr\n"),
        reply.json({ summary: "added greeting.txt", testsRun: "none", done: true }),
      ],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Add a greeting file" },
      reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
    });
    const taskId = await h.approvedTask(chat, { title: "Add a greeting file", repos: ["acme/shop"] });

    const texts = await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const task = await h.task(taskId);
    expect(task.status).toBe("success");
    expect(task.branch).toMatch(new RegExp(`^ratatoskr/${taskId}-add-a-greeting-file`));

    // The remote has the branch with the agent's file, committed with the task's title and round.
    const branch = task.branch!;
    expect(await h.git("acme/shop", ["show", `refs/heads/${branch}:greeting.txt`])).toBe("Hello from Ratatoskr\n");
    const log = await h.git("acme/shop", ["log", "--format=%s|%b", `main..refs/heads/${branch}`]);
    expect(log.trim().split("\n").filter(Boolean)).toEqual([`Add a greeting file|ratatoskr task #${taskId}, round 1`]);
    const head = (await h.git("acme/shop", ["rev-parse", `refs/heads/${branch}`])).trim();

    // What the person read: each step once, in order, ending with the branch and the pushed commit.
    const steps = texts.filter((t) => t.includes(`#${taskId}`));
    const order = ["is approved", "is at work", "round 1: the changes are pushed", "is done"];
    expect(order.map((s) => steps.findIndex((t) => t.includes(s)))).toEqual([0, 1, 2, 3]);
    expect(steps).toHaveLength(4);
    expect(steps[3]).toContain(branch);
    expect(steps[3]).toContain(head.slice(0, 7));

    // Every agent run is a trace with its session, opened when the run started and closed after.
    const traces = await h.traces(taskId);
    expect(traces.map((t) => [t.agent, t.round, t.outcome])).toEqual([
      ["dev", 1, "completed"],
      ["reviewer", 1, "completed"],
    ]);
    for (const trace of traces) {
      expect(trace.sessionId).toMatch(/^ses_/);
      expect(trace.serverUrl).toBe(h.opencode.url);
      expect(trace.endedAt!.getTime()).toBeGreaterThanOrEqual(trace.startedAt.getTime());
    }
    expect(traces[1]!.prompt).toContain("+Hello from Ratatoskr");

    // The task has ended: the dev's and the reviewer's working trees of it are removed.
    await waitFor(h, async () => ((await treesOf("dev", taskId)).length + (await treesOf("review", taskId)).length === 0 ? true : undefined), 20_000);
  }, 120_000);

  it("two rounds: the reviewer's findings reach the next dev round, and the second review passes", async () => {
    const chat = CHATS[1]!;
    await h.repo("acme/cart");
    h.model.addRule({
      match: devRound(2, 3, "Show the cart total"),
      reply: [
        reply.write("acme/cart/cart.txt", "total includes tax\n"),
        reply.json({ summary: "tax added", done: true }),
      ],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Show the cart total" },
      reply: [reply.write("acme/cart/cart.txt", "total\n"), reply.json({ summary: "total shown", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "+total includes tax" },
      reply: [reply.json({ passed: true, findings: [{ severity: "minor", file: "cart.txt", text: "wording" }] })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Show the cart total" },
      reply: [
        reply.json({
          passed: false,
          findings: [
            { severity: "major", file: "cart.txt", line: 1, text: "the total must include tax" },
            { severity: "minor", file: null, text: "consider a currency sign" },
          ],
        }),
      ],
    });
    const taskId = await h.approvedTask(chat, { title: "Show the cart total", repos: ["acme/cart"] });
    const texts = await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });

    const steps = texts.filter((t) => t.includes(`#${taskId}`));
    const order = [
      "is approved",
      "is at work",
      "round 1: the changes are pushed",
      "round 1: the reviewer left 1 remark",
      "round 2: the changes are pushed",
      "is done",
    ];
    expect(order.map((s) => steps.findIndex((t) => t.includes(s)))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(steps).toHaveLength(6);

    // The second dev round was told what the reviewer found, severity, place and text.
    const revise = (await h.traces(taskId)).filter((t) => t.agent === "dev" && t.round === 2);
    expect(revise).toHaveLength(1);
    expect(revise[0]!.prompt).toContain("[major] cart.txt:1 — the total must include tax");

    const task = await h.task(taskId);
    expect(task).toMatchObject({ status: "success", round: 2 });
    const log = await h.git("acme/cart", ["log", "--format=%b", `main..refs/heads/${task.branch}`]);
    expect(log.trim().split(/\n+/)).toEqual([`ratatoskr task #${taskId}, round 2`, `ratatoskr task #${taskId}, round 1`]);
    expect(await h.git("acme/cart", ["show", `refs/heads/${task.branch}:cart.txt`])).toBe("total includes tax\n");
  }, 120_000);

  it("rounds exhausted: the task fails with the remaining findings and a postmortem is queued", async () => {
    const chat = CHATS[2]!;
    await h.repo("acme/tax");
    h.model.addRule({
      match: devRound(2, 2, "Set the tax rate"),
      reply: [reply.write("acme/tax/rate.txt", "0.2\n"), reply.json({ summary: "rate 0.2", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Set the tax rate" },
      reply: [reply.write("acme/tax/rate.txt", "0.1\n"), reply.json({ summary: "rate 0.1", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Set the tax rate" },
      reply: [reply.json({ passed: false, findings: [{ severity: "blocking", file: "rate.txt", line: 1, text: "the rate is wrong" }] })],
    });
    const postmortem = h.queue("postmortem");
    const taskId = await h.approvedTask(chat, { title: "Set the tax rate", repos: ["acme/tax"], maxRounds: 2 });
    const texts = await h.waitForText(chat, "failed", 90_000);

    const steps = texts.filter((t) => t.includes(`#${taskId}`));
    expect(steps.filter((t) => t.includes("the changes are pushed"))).toHaveLength(2);
    expect(steps.filter((t) => t.includes("the reviewer left"))).toHaveLength(1);
    const failed = steps.at(-1)!;
    expect(failed).toContain("after 2 rounds");
    expect(failed).toContain("[blocking] rate.txt:1 — the rate is wrong");
    expect(await h.task(taskId)).toMatchObject({ status: "failed", round: 2 });
    const jobs = await postmortem.getJobs(["waiting", "active", "completed", "failed", "delayed"]);
    expect(jobs.filter((j) => j.data.taskId === taskId).map((j) => j.data.cause)).toEqual(["failed"]);
  }, 120_000);

  it("a round that changed nothing fails, saying so, and pushes no branch", async () => {
    const chat = CHATS[3]!;
    await h.repo("acme/idle");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Tidy the idle repo" },
      reply: [reply.json({ summary: "nothing to do", done: true })],
    });
    const taskId = await h.approvedTask(chat, { title: "Tidy the idle repo", repos: ["acme/idle"] });
    const texts = await h.waitForText(chat, "failed", 90_000);
    expect(texts.at(-1)).toContain("changed nothing in round 1");
    expect(await h.task(taskId)).toMatchObject({ status: "failed" });
    expect((await h.git("acme/idle", ["for-each-ref", "--format=%(refname)", "refs/heads"])).trim()).toBe("refs/heads/main");
    expect(texts.some((t) => t.includes("reviewer is checking"))).toBe(false);
  }, 120_000);

  it("two repositories in one task: both branches pushed, the reviewer sees both diffs", async () => {
    const chat = CHATS[4]!;
    await h.repo("acme/front");
    await h.repo("acme/back");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Rename the login route" },
      reply: [
        {
          toolCalls: [
            { name: "write", args: { path: "acme/front/route.txt", content: "/sign-in\n" } },
            { name: "write", args: { path: "acme/back/route.txt", content: "POST /sign-in\n" } },
          ],
        },
        reply.json({ summary: "renamed on both sides", done: true }),
      ],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Rename the login route" },
      reply: [reply.json({ passed: true, findings: [] })],
    });
    const taskId = await h.approvedTask(chat, { title: "Rename the login route", repos: ["acme/front", "acme/back"] });
    const texts = await h.waitForText(chat, "is done", 90_000);
    const task = await h.task(taskId);
    expect(await h.git("acme/front", ["show", `refs/heads/${task.branch}:route.txt`])).toBe("/sign-in\n");
    expect(await h.git("acme/back", ["show", `refs/heads/${task.branch}:route.txt`])).toBe("POST /sign-in\n");
    const front = (await h.git("acme/front", ["rev-parse", `refs/heads/${task.branch}`])).trim().slice(0, 7);
    const back = (await h.git("acme/back", ["rev-parse", `refs/heads/${task.branch}`])).trim().slice(0, 7);
    expect(texts.at(-1)).toContain(`acme/front@${front}, acme/back@${back}`);
    const review = (await h.traces(taskId)).find((t) => t.agent === "reviewer")!;
    expect(review.prompt).toContain("+/sign-in");
    expect(review.prompt).toContain("+POST /sign-in");
  }, 120_000);

  it("a push the remote rejects (someone else pushed the branch) fails clearly and is never forced", async () => {
    const chat = CHATS[5]!;
    const bare = await h.repo("acme/race");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Race for the branch" },
      reply: [reply.write("acme/race/mine.txt", "mine\n"), reply.json({ summary: "done", done: true }, { delayMs: 4_000 })],
    });
    const taskId = await h.approvedTask(chat, { title: "Race for the branch", repos: ["acme/race"] });
    // While the agent works, someone else pushes the same branch.
    const branch = await waitFor(h, async () => (await h.task(taskId)).branch ?? undefined);
    await waitFor(h, async () => h.model.requests.some((r) => r.isToolResult && r.userTexts.some((t) => t.includes("Race for the branch"))) || undefined);
    const theirs = await commitToBare(bare, branch, { "theirs.txt": "theirs\n" }, "someone else");

    const texts = await h.waitForText(chat, "failed", 90_000);
    expect(texts.at(-1)).toMatch(/push of .* rejected: the remote branch moved/);
    // The reason says it once, not a summary followed by the same words from the git error.
    expect(texts.at(-1)!.match(/push of/g)).toHaveLength(1);
    expect(await h.task(taskId)).toMatchObject({ status: "failed" });
    // Their commit is still the branch head: nothing was forced over it.
    expect((await h.git("acme/race", ["rev-parse", `refs/heads/${branch}`])).trim()).toBe(theirs);
  }, 120_000);

  it("/cancel while the dev agent works interrupts its session within 5 s and keeps the work pushed so far", async () => {
    const chat = CHATS[6]!;
    await h.repo("acme/slow");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Slow work to cancel" },
      reply: [reply.write("acme/slow/first.txt", "first\n"), reply.json({ summary: "late", done: true }, { delayMs: 60_000 })],
    });
    const taskId = await h.approvedTask(chat, { title: "Slow work to cancel", repos: ["acme/slow"] });
    const slow = await waitFor(h, async () =>
      h.model.requests.find((r) => r.isToolResult && r.userTexts.some((t) => t.includes("Slow work to cancel"))),
    );
    const cancelledAt = Date.now();
    h.telegram.sendText(chat, "/cancel");
    await h.waitForText(chat, "is cancelled", 30_000);

    // Within 5 s of the cancel the session hung up on the model call it waited on, and the run ended as cancelled.
    await waitFor(h, async () => (slow.aborted ? true : undefined), 10_000);
    expect(slow.abortedAt! - cancelledAt).toBeLessThan(5_000);
    const dev = await waitFor(h, async () => (await h.traces(taskId)).find((t) => t.agent === "dev" && t.endedAt !== null));
    expect(dev.outcome).toBe("cancelled");
    expect(dev.endedAt!.getTime() - cancelledAt).toBeLessThan(5_000);

    const task = await h.task(taskId);
    expect(task.status).toBe("cancelled");
    const branch = task.branch!;
    // What the agent wrote before the cancel is pushed on the task branch.
    const pushed = await waitFor(h, () => h.git("acme/slow", ["show", `refs/heads/${branch}:first.txt`]).catch(() => undefined), 10_000);
    expect(pushed).toBe("first\n");
    expect(h.texts(chat).some((t) => t.includes("reviewer is checking"))).toBe(false);
  }, 120_000);
});
