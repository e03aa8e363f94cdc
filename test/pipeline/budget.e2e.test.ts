import { formatCallbackData } from "@ratatoskr/contracts";
import { reply, scriptedCost } from "@ratatoskr/testkit";
import type { AgentJobProgress } from "@ratatoskr/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdPushes } from "../support/push-hold.ts";
import { CHATS, DEV, PipelineHarness, REVIEWER, waitFor } from "./pipeline-harness.ts";

/**
 * P5 across processes: a task whose recorded runs already spent more than its budget stops before
 * its next run (here the first dev round: the analysis was costly), the person gets the spend with
 * Continue (+budget) / Stop, and Continue resumes exactly the held-back run, once.
 *
 * The first two cases seed the spend as a finished run, to place it exactly; the third spends it
 * for real: the scripted model reports its usage as OpenAI-compatible providers do and the
 * testkit's opencode config prices it (SCRIPTED_PRICE). The last one watches a run live (O6):
 * `/status N` while the agent works shows its stage, round, last tool, the spend so far and how
 * to attach.
 */
const h = new PipelineHarness();
const BUDGET_USD = 0.01;
const SPENT_USD = 0.0234;

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"], { TASK_BUDGET_USD: String(BUDGET_USD) });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

describe("task budget", () => {
  it("stops a task past its budget before the next run, and Continue (+budget) resumes that run once", async () => {
    const chat = CHATS[5]!;
    await h.repo("acme/budget");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Add a costly file" },
      reply: [reply.write("acme/budget/costly.txt", "worth it\n"), reply.json({ summary: "added costly.txt", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Add a costly file" },
      reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
    });
    const taskId = await h.approvedTask(chat, {
      title: "Add a costly file",
      repos: ["acme/budget"],
      budgetUsd: BUDGET_USD,
      spentUsd: SPENT_USD,
    });

    await h.waitForText(chat, "is paused", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    expect(await h.task(taskId)).toMatchObject({ status: "paused", pausedStep: "implement" });
    // Stopped before the run: no dev session was opened, the model was never asked.
    expect((await h.traces(taskId)).map((t) => t.agent)).toEqual(["analyst"]);
    expect(h.model.requests.some((r) => r.userTexts.some((t) => t.includes("Add a costly file")))).toBe(false);

    // The person reads the spend, with the two buttons under it.
    const stop = h.telegram.sent(chat).find((r) => r.kind === "sent" && r.plainText.includes("is paused"))!;
    expect(stop.plainText).toContain(`it has spent $${SPENT_USD.toFixed(2)}, more than its budget of $0.01`);
    const buttons = stop.replyMarkup?.inline_keyboard.flat().map((b) => ("callback_data" in b ? b.callback_data : ""));
    expect(buttons).toEqual([formatCallbackData({ action: "more-budget", taskId }), formatCallbackData({ action: "stop", taskId })]);

    const first = h.telegram.pressButton(chat, stop.messageId, buttons![0]!);
    const second = h.telegram.pressButton(chat, stop.messageId, buttons![0]!);
    const texts = await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });

    const steps = texts.filter((t) => t.includes(`#${taskId}`));
    const order = ["is approved", "is paused", "continues with a budget of", "round 1: the changes are pushed", "is done"];
    expect(order.map((s) => steps.findIndex((t) => t.includes(s)))).toEqual([0, 1, 2, 3, 4]);
    expect(steps).toHaveLength(5);
    const done = await h.task(taskId);
    expect(done.status).toBe("success");
    expect(done.budgetUsd).toBeGreaterThan(SPENT_USD);
    // The held-back dev round ran once, after Continue; the second press changed nothing.
    expect((await h.traces(taskId)).map((t) => t.agent)).toEqual(["analyst", "dev", "reviewer"]);
    const answers = [h.telegram.callbackAnswer(first), h.telegram.callbackAnswer(second)];
    expect(answers.filter((a) => a?.text?.includes("not waiting on its budget any more"))).toHaveLength(1);
  }, 240_000);

  it("a dev round that passed the budget pauses before the review, without telling of a review that never ran", async () => {
    const chat = CHATS[6]!;
    const repo = "acme/overspent";
    await h.repo(repo);
    const title = "Overspend in the round";
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write(`${repo}/spent.txt`, "spent\n"), reply.json({ summary: "added spent.txt", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });
    const hold = await holdPushes(h.bare(repo));
    const taskId = await h.approvedTask(chat, { title, repos: [repo], budgetUsd: BUDGET_USD });

    // The round's spend passes the budget while it runs (seeded: the scripted model costs nothing).
    await hold.taken();
    const now = new Date();
    await h.database.db.prisma.agentTrace.create({
      data: { taskId, agent: "dev", round: 1, prompt: "seeded spend", output: "{}", outcome: "completed", cost: SPENT_USD, startedAt: now, endedAt: now },
    });
    await hold.release();

    await h.waitForText(chat, "is paused", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    expect(await h.task(taskId)).toMatchObject({ status: "paused", pausedStep: "review" });
    const paused = h.texts(chat).filter((t) => t.includes(`#${taskId}`));
    expect(paused.filter((t) => t.includes("reviewer is checking"))).toEqual([]);
    expect(h.model.requests.some((r) => r.system.includes(REVIEWER) && r.userTexts.some((t) => t.includes(title)))).toBe(false);

    const stop = h.telegram.sent(chat).find((r) => r.kind === "sent" && r.plainText.includes("is paused"))!;
    h.telegram.pressButton(chat, stop.messageId, formatCallbackData({ action: "more-budget", taskId }));
    const texts = await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const steps = texts.filter((t) => t.includes(`#${taskId}`));
    // Each step told once, in order, and never a review that did not run.
    const order = ["is approved", "is paused", "continues with a budget of", "is done"];
    expect(order.map((s) => steps.filter((t) => t.includes(s)).length)).toEqual([1, 1, 1, 1]);
    const at = order.map((s) => steps.findIndex((t) => t.includes(s)));
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(steps.filter((t) => t.includes("reviewer is checking"))).toEqual([]);
    // Continue ran the held-back review once, on the round's pushed work.
    expect((await h.traces(taskId)).map((t) => t.agent)).toEqual(["dev", "dev", "reviewer"]);
    expect((await h.task(taskId)).status).toBe("success");
  }, 240_000);

  it("a run that passes the budget while it runs is stopped, its work pushed, and Continue goes on in the same session", async () => {
    const chat = CHATS[7]!;
    const repo = "acme/live-spend";
    await h.repo(repo);
    const title = "Spend while running";
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [
        reply.write(`${repo}/first.txt`, "first\n"),
        // The budget is passed by the first step's spend; the run is stopped while this one waits.
        { ...reply.write(`${repo}/never.txt`, "never\n"), delayMs: 30_000 },
        reply.write(`${repo}/second.txt`, "second\n"),
        reply.json({ summary: "added first.txt and second.txt", done: true }),
      ],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });
    // Less than one request of the scripted model costs: the first step passes it.
    const budgetUsd = 0.0001;
    const taskId = await h.approvedTask(chat, { title, repos: [repo], budgetUsd });

    await h.waitForText(chat, "is paused", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const paused = await h.task(taskId);
    expect(paused).toMatchObject({ status: "paused", pausedStep: "continue" });
    // Stopped mid-run, not at its end: the delayed step was cut off, the first step's file is pushed.
    const [stopped] = await h.traces(taskId);
    expect(stopped).toMatchObject({ agent: "dev", outcome: "cancelled" });
    expect(stopped!.cost).toBeGreaterThan(budgetUsd);
    expect(h.model.requests.some((r) => r.aborted && r.sessionId === stopped!.sessionId)).toBe(true);
    const pushed = await h.git(repo, ["ls-tree", "-r", "--name-only", paused.branch!]);
    expect(pushed.split("\n")).toContain("first.txt");
    const notice = h.telegram.sent(chat).find((r) => r.kind === "sent" && r.plainText.includes("is paused"))!;
    expect(notice.plainText).toContain("more than its budget of $0.0001");

    h.telegram.pressButton(chat, notice.messageId, formatCallbackData({ action: "more-budget", taskId }));
    await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const traces = await h.traces(taskId);
    expect(traces.map((t) => t.agent)).toEqual(["dev", "dev", "reviewer"]);
    // Continue resumed the session that holds the run's context; it was not started afresh.
    expect(traces[1]!.sessionId).toBe(stopped!.sessionId);
    const files = (await h.git(repo, ["ls-tree", "-r", "--name-only", paused.branch!])).split("\n");
    expect(files).toEqual(expect.arrayContaining(["first.txt", "second.txt"]));
    expect(files).not.toContain("never.txt");
    // The recorded spend is the usage the model reported at the configured price.
    const reported = h.model.requests.filter((r) => traces.some((t) => t.sessionId === r.sessionId) && r.usage);
    const expected = reported.reduce((usd, r) => usd + scriptedCost(r.usage!), 0);
    expect(traces.reduce((usd, t) => usd + t.cost, 0)).toBeCloseTo(expected, 9);
    expect((await h.task(taskId)).status).toBe("success");
  }, 240_000);

  it("a review that passes the budget while it runs is stopped, and Continue runs it again in its own session", async () => {
    const chat = CHATS[8]!;
    const repo = "acme/live-review";
    // Reading it puts ~13k tokens or more into each of the reviewer's next requests (about $0.0013 at the scripted price).
    await h.repo(repo, { "README.md": "# review\n", "big.txt": `${"0123456789abcdef".repeat(6)}\n`.repeat(2_000) });
    const title = "Review while spending";
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write(`${repo}/small.txt`, "small\n"), reply.json({ summary: "added small.txt", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: title },
      reply: [
        reply.read(`${repo}/big.txt`),
        // A step's spend is known when it ends: these carry the big read past the budget.
        reply.read(`${repo}/README.md`),
        reply.read(`${repo}/README.md`),
        reply.json({ passed: true, summary: "never sent", findings: [] }, { delayMs: 30_000 }),
        // Continue sends the review prompt again into the same session: it answers now.
        reply.json({ passed: true, summary: "fine", findings: [] }),
      ],
    });
    // Above the dev round's two requests (about $0.0007), below them plus the reviewer's big read.
    const budgetUsd = 0.002;
    const taskId = await h.approvedTask(chat, { title, repos: [repo], budgetUsd });

    await h.waitForText(chat, "is paused", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    expect(await h.task(taskId)).toMatchObject({ status: "paused", pausedStep: "review" });
    const stopped = (await h.traces(taskId)).at(-1)!;
    expect(stopped).toMatchObject({ agent: "reviewer", outcome: "cancelled" });
    // Stopped before its verdict: the delayed answer was cut off or never asked for.
    const answered = h.model.requests.filter((r) => r.sessionId === stopped.sessionId && r.turnIndex === 3 && !r.aborted);
    expect(answered).toEqual([]);

    const notice = h.telegram.sent(chat).find((r) => r.kind === "sent" && r.plainText.includes("is paused"))!;
    h.telegram.pressButton(chat, notice.messageId, formatCallbackData({ action: "more-budget", taskId }));
    await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const traces = await h.traces(taskId);
    expect(traces.map((t) => t.agent)).toEqual(["dev", "reviewer", "reviewer"]);
    // The review went on in the session the budget stopped, which holds what it had read.
    expect(traces[2]!.sessionId).toBe(stopped.sessionId);
  }, 240_000);

  it("/status N during a run shows its stage, round, last tool, the spend so far and the attach command", async () => {
    const chat = CHATS[9]!;
    const repo = "acme/watched";
    await h.repo(repo);
    const title = "Watch the run live";
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      // The agent writes its file, then its session waits on the model while the person looks.
      reply: [reply.write(`${repo}/watched.txt`, "watched\n"), reply.json({ summary: "added watched.txt", done: true }, { holdUntil: released })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });
    const taskId = await h.approvedTask(chat, { title, repos: [repo], budgetUsd: 1 });

    // The dev job has published the run's tool call and what its first step cost.
    const devQueue = h.queue("dev");
    const progress = await waitFor(h, async () => {
      const job = (await devQueue.getJobs(["active"])).find((j) => j.data.taskId === taskId);
      const live = job?.progress as AgentJobProgress | undefined;
      return live?.lastTool === "write" && live.costUsd > 0 ? live : undefined;
    });
    const { agentSessionId, agentServerUrl } = await h.task(taskId);
    expect(agentServerUrl).toBe(h.opencode.url);
    expect(progress.sessionId).toBe(agentSessionId);
    const spent = h.model.requests.filter((r) => r.sessionId === agentSessionId && r.usage).reduce((usd, r) => usd + scriptedCost(r.usage!), 0);
    const usd = new Intl.NumberFormat("en", { style: "currency", currency: "USD", maximumFractionDigits: 4 }).format(spent);

    h.telegram.sendText(chat, `/status ${taskId}`);
    const status = (await h.waitForText(chat, "Now: ")).find((t) => t.includes("Now: "))!;
    expect(status).toContain("Round: 1 of 3");
    expect(status).toContain("Now: dev, round 1, last tool write");
    // The run's spend so far, though its trace records it only when it ends.
    expect(status).toContain(`Total: ${progress.tokens.toLocaleString("en")} tokens, ${usd} of a $1.00 budget`);
    expect(status).toContain(`Watch it: opencode attach ${h.opencode.url} --session ${agentSessionId}`);
    h.telegram.sendText(chat, `/attach ${taskId}`);
    await h.waitForText(chat, `opencode attach ${h.opencode.url} --session ${agentSessionId}`);

    release();
    await h.waitForText(chat, "is done", 90_000);
    // Once the agents are done, /status shows their runs and no live one.
    h.telegram.sendText(chat, `/status ${taskId}`);
    const settled = (text: string) => text.includes(`Task #${taskId} —`) && !text.includes("Now: ");
    await h.telegram.waitForMessages(chat, (r) => settled(r.plainText), { kind: "sent" });
    expect(h.texts(chat).find(settled)).toMatch(/dev — completed[\s\S]*reviewer — completed/);
  }, 240_000);
});
