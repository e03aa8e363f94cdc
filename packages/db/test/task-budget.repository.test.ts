import { checkBudget, extendedBudgetUsd } from "@ratatoskr/contracts";
import { stopIfOverBudget } from "@ratatoskr/db";
import { useTestRepositories } from "./support/test-repositories.ts";
import { describe, expect, it } from "vitest";

const db = useTestRepositories();

const run = (agent: string, cost: number, tokens: { input: number; output: number; reasoning?: number }) => ({
  agent,
  prompt: `${agent} prompt`,
  outcome: "completed",
  tokens: { ...tokens, cacheRead: 9_999 },
  cost,
  startedAt: new Date("2026-11-30T10:00:00Z"),
  endedAt: new Date("2026-11-30T10:01:00Z"),
});

/** A task whose dev round 1 runs: approved, then started. */
async function runningTask(budgetUsd: number | null) {
  const task = await db.repos.tasks.createTelegramTask({
    chatId: 4242,
    maxTurns: 5,
    maxRounds: 3,
    budgetUsd,
  });
  await db.repos.applyTransition(task.id, { type: "turn.received" });
  await db.repos.applyTransition(task.id, { type: "analyst.drafted", consumedTurns: 1, forced: false });
  await db.repos.applyTransition(task.id, { type: "user.approved" });
  await db.repos.applyTransition(task.id, { type: "dev.started" });
  return task;
}

describe("task budget in the database (P5)", () => {
  it("sums every run of a task, and only that task, into tracesSummary", async () => {
    const task = await runningTask(null);
    const other = await runningTask(null);
    expect(await db.repos.traces.tracesSummary(task.id)).toEqual({ runs: 0, tokens: 0, costUsd: 0 });
    await db.repos.traces.record(task.id, run("dev", 0.42, { input: 1_000, output: 200, reasoning: 50 }), 1);
    await db.repos.traces.record(task.id, run("reviewer", 0.13, { input: 300, output: 40 }), 1);
    await db.repos.traces.record(other.id, run("dev", 5, { input: 1, output: 1 }), 1);
    const summary = await db.repos.traces.tracesSummary(task.id);
    expect(summary).toEqual({ runs: 2, tokens: 1_590, costUsd: expect.closeTo(0.55, 10) });
  });

  it("pauses with the held-back step, resumes it once on Continue with the new budget, and stores both", async () => {
    const task = await runningTask(0.5);
    await db.repos.traces.record(task.id, run("dev", 0.6, { input: 10, output: 10 }), 1);
    const { costUsd } = await db.repos.traces.tracesSummary(task.id);
    const check = checkBudget(costUsd, (await db.repos.tasks.findById(task.id))?.budgetUsd);
    if (!check.exceeded) throw new Error("expected the budget to be exceeded");

    await db.repos.applyTransition(task.id, { type: "budget.exceeded", ...check, step: "review" });
    expect(await db.repos.tasks.findById(task.id)).toMatchObject({
      status: "paused",
      pausedStep: "review",
      budgetUsd: 0.5,
    });

    const budgetUsd = extendedBudgetUsd(costUsd, 0.5);
    const { task: resumed, followUps } = await db.repos.applyTransition(task.id, {
      type: "user.budget-extended",
      budgetUsd,
    });
    expect(resumed).toMatchObject({ status: "running", pausedStep: null, budgetUsd: 1.1 });
    expect(followUps.map((f) => [f.queue, f.data])).toEqual([
      ["review", { v: 1, taskId: task.id, kind: "diff", round: 1 }],
      ["notify", expect.objectContaining({ kind: "message" })],
    ]);
    await expect(
      db.repos.applyTransition(task.id, { type: "user.budget-extended", budgetUsd }),
    ).rejects.toThrow(/not-paused/);
    expect(checkBudget(costUsd, resumed.budgetUsd)).toEqual({ exceeded: false });
  });
});

describe("stopIfOverBudget (the check every agent job makes before its run)", () => {
  const transition = (taskId: number, event: Parameters<typeof db.repos.applyTransition>[1]) =>
    db.repos.applyTransition(taskId, event);

  it("lets the run start while the spend is within the budget, and when there is none", async () => {
    const unlimited = await runningTask(null);
    await db.repos.traces.record(unlimited.id, run("dev", 99, { input: 1, output: 1 }), 1);
    expect(await stopIfOverBudget({ repos: db.repos, transition }, unlimited.id, "review")).toEqual({
      proceed: true,
    });

    const within = await runningTask(1);
    await db.repos.traces.record(within.id, run("dev", 1, { input: 1, output: 1 }), 1);
    expect(await stopIfOverBudget({ repos: db.repos, transition }, within.id, "review")).toEqual({
      proceed: true,
    });
    expect((await db.repos.tasks.findById(within.id))?.status).toBe("running");
  });

  it("pauses a task past its budget once, and keeps a cancelled task from running", async () => {
    const task = await runningTask(1);
    await db.repos.traces.record(task.id, run("dev", 0.7, { input: 1, output: 1 }), 1);
    await db.repos.traces.record(task.id, run("reviewer", 0.4, { input: 1, output: 1 }), 1);
    const first = await stopIfOverBudget({ repos: db.repos, transition }, task.id, "revise");
    expect(first).toEqual({ proceed: false, spentUsd: expect.closeTo(1.1, 10), budgetUsd: 1, paused: true });
    const second = await stopIfOverBudget({ repos: db.repos, transition }, task.id, "revise");
    expect(second).toMatchObject({ proceed: false, paused: false });
    const events = await db.repos.events.list(task.id);
    expect(events.filter((e) => e.type === "budget.exceeded").map((e) => e.payload)).toEqual([
      { type: "budget.exceeded", spentUsd: 1.1, budgetUsd: 1, step: "revise" },
    ]);
  });
});
