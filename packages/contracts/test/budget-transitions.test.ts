import { describe, expect, it } from "vitest";
import {
  BUDGET_STEPS,
  TELEGRAM_STATUSES,
  checkBudget,
  extendedBudgetUsd,
  reduceTask,
  type BudgetEvent,
  type TaskEffect,
  type TaskSnapshot,
  type TaskStatus,
} from "../src/index.ts";

function task(status: TaskStatus, over: Partial<TaskSnapshot> = {}): TaskSnapshot {
  return {
    id: 7,
    source: "telegram",
    status,
    version: 3,
    turnCount: 1,
    pendingTurns: 0,
    analysing: false,
    skipRequested: false,
    round: 2,
    maxTurns: 5,
    maxRounds: 3,
    budgetUsd: 1,
    pausedStep: null,
    ...over,
  };
}

const jobsOf = (effects: TaskEffect[]) =>
  effects.flatMap((e) =>
    e.type === "enqueue" ? [`${e.job.queue}:${e.job.jobId}:${JSON.stringify(e.job.data)}`] : [],
  );
const notesOf = (effects: TaskEffect[]) =>
  effects.flatMap((e) => (e.type === "notify" ? [`${e.template} ${JSON.stringify(e.params)}`] : []));

const EXCEEDED: BudgetEvent = { type: "budget.exceeded", spentUsd: 1.2, budgetUsd: 1, step: "revise" };
const EXTENDED: BudgetEvent = { type: "user.budget-extended", budgetUsd: 2.2 };
const STOPPED: BudgetEvent = { type: "user.budget-stopped" };

/** from, event → to, jobs (queue:jobId:data), notifications (template params). */
const LEGAL: Array<[TaskStatus, BudgetEvent, Partial<TaskSnapshot>, TaskStatus, string[], string[]]> = [
  [
    "approved",
    EXCEEDED,
    {},
    "paused",
    [],
    ['task.budget-exceeded {"taskId":7,"spentUsd":1.2,"budgetUsd":1}'],
  ],
  ["running", EXCEEDED, {}, "paused", [], ['task.budget-exceeded {"taskId":7,"spentUsd":1.2,"budgetUsd":1}']],
  [
    "paused",
    EXTENDED,
    { pausedStep: "revise" },
    "running",
    ['dev:7-dev-4:{"v":1,"taskId":7,"kind":"revise","round":2}'],
    ['task.budget-extended {"taskId":7,"budgetUsd":2.2}'],
  ],
  [
    "paused",
    EXTENDED,
    { pausedStep: "review" },
    "running",
    ['review:7-review-4:{"v":1,"taskId":7,"kind":"diff","round":2}'],
    ['task.budget-extended {"taskId":7,"budgetUsd":2.2}'],
  ],
  [
    "paused",
    EXTENDED,
    { pausedStep: "continue" },
    "running",
    ['dev:7-dev-4:{"v":1,"taskId":7,"kind":"continue","round":2}'],
    ['task.budget-extended {"taskId":7,"budgetUsd":2.2}'],
  ],
  [
    "paused",
    EXTENDED,
    { pausedStep: "implement", round: 1 },
    "running",
    ['dev:7-dev-4:{"v":1,"taskId":7,"kind":"implement","round":1}'],
    ['task.budget-extended {"taskId":7,"budgetUsd":2.2}'],
  ],
  ["paused", STOPPED, { pausedStep: "revise" }, "cancelled", [], ['task.cancelled {"taskId":7}']],
];

describe("budget stop (P5)", () => {
  it.each(LEGAL)("%s + %o → %s", (from, event, over, to, jobs, notes) => {
    const result = reduceTask(task(from, over), event);
    if (!result.ok) throw new Error(`refused: ${result.refusal.reason}`);
    expect(result.task.status).toBe(to);
    expect(result.task.version).toBe(4);
    expect(jobsOf(result.effects)).toEqual(jobs);
    expect(notesOf(result.effects)).toEqual(notes);
  });

  it("remembers the held-back step while paused and forgets it on Continue or Stop, keeping the new budget", () => {
    const paused = reduceTask(task("running"), { ...EXCEEDED, step: "review" });
    if (!paused.ok) throw new Error("refused");
    expect(paused.task).toMatchObject({ status: "paused", pausedStep: "review", budgetUsd: 1 });
    const resumed = reduceTask(paused.task, EXTENDED);
    expect(resumed.ok && resumed.task).toMatchObject({ status: "running", pausedStep: null, budgetUsd: 2.2 });
    const stopped = reduceTask(paused.task, STOPPED);
    expect(stopped.ok && stopped.task).toMatchObject({ status: "cancelled", pausedStep: null });
  });

  const legal = new Set(LEGAL.map(([from, event]) => `${from}|${event.type}`));
  const illegal = TELEGRAM_STATUSES.flatMap((s) =>
    [EXCEEDED, EXTENDED, STOPPED]
      .filter((e) => !legal.has(`${s}|${e.type}`))
      .map((e) => [s, e.type, e] as const),
  );
  it.each(illegal)("refuses %s + %s", (from, _type, event) => {
    expect(reduceTask(task(from), event).ok).toBe(false);
  });

  it("applies each button once: a second Continue or a Stop after Continue is refused as not-paused", () => {
    const resumed = reduceTask(task("paused", { pausedStep: "revise" }), EXTENDED);
    if (!resumed.ok) throw new Error("refused");
    for (const again of [EXTENDED, STOPPED]) {
      const second = reduceTask(resumed.task, again);
      expect(second.ok || second.refusal.reason).toBe("not-paused");
    }
  });

});

describe("the budget pause on the Gitea door (one pipeline)", () => {
  const gitea = (status: TaskStatus, over: Partial<TaskSnapshot> = {}) =>
    task(status, { source: "gitea", command: { kind: "implement", target: "issue", targetKey: "a/b#1" }, ...over });

  it("pauses a running command, resumes the held-back run on continue and frees the line on stop", () => {
    const paused = reduceTask(gitea("running"), { ...EXCEEDED, step: "continue" });
    if (!paused.ok) throw new Error(`refused: ${paused.refusal.reason}`);
    expect(paused.task).toMatchObject({ status: "paused", pausedStep: "continue" });
    // The notification becomes the status comment's edit (the channel follows the task's door).
    expect(notesOf(paused.effects)).toHaveLength(1);
    expect(jobsOf(paused.effects)).toEqual([]);

    const resumed = reduceTask(paused.task, EXTENDED);
    if (!resumed.ok) throw new Error(`refused: ${resumed.refusal.reason}`);
    expect(resumed.task).toMatchObject({ status: "running", budgetUsd: 2.2, pausedStep: null });
    expect(jobsOf(resumed.effects)).toEqual(['dev:7-dev-5:{"v":1,"taskId":7,"kind":"continue","round":2}']);

    const stopped = reduceTask(paused.task, STOPPED);
    if (!stopped.ok) throw new Error(`refused: ${stopped.refusal.reason}`);
    expect(stopped.task.status).toBe("cancelled");
    expect(jobsOf(stopped.effects)).toEqual(['intake:7-dispatch-5:{"v":1,"kind":"dispatch-next","targetKey":"a/b#1"}']);
  });

  it("holds back a fix's run as a fix, and lets /agent cancel end a paused command", () => {
    const fix = gitea("paused", { pausedStep: "fix", round: 1, command: { kind: "fix", target: "pr", targetKey: "a/b#2" } });
    const resumed = reduceTask(fix, EXTENDED);
    expect(resumed.ok && jobsOf(resumed.effects)).toEqual(['dev:7-dev-4:{"v":1,"taskId":7,"kind":"fix","round":1}']);
    const cancelled = reduceTask(gitea("paused"), { type: "user.cancelled" });
    expect(cancelled.ok && cancelled.task.status).toBe("cancelled");
  });

  it("takes a command's budget when it is authorized, and pauses only a running command", () => {
    const received = gitea("received", { budgetUsd: null });
    const queued = reduceTask(received, { type: "command.authorized", budgetUsd: 0.5 });
    expect(queued.ok && queued.task).toMatchObject({ status: "queued", budgetUsd: 0.5 });
    for (const status of ["received", "queued", "paused", "success", "failed", "cancelled"] as const) {
      expect(reduceTask(gitea(status), EXCEEDED).ok).toBe(false);
    }
  });
});

describe("checkBudget", () => {
  it("lets runs start without a budget, up to and at it, and stops them once past it", () => {
    expect(checkBudget(1e6, null)).toEqual({ exceeded: false });
    expect(checkBudget(1e6, undefined)).toEqual({ exceeded: false });
    expect(checkBudget(0.99, 1)).toEqual({ exceeded: false });
    expect(checkBudget(1, 1)).toEqual({ exceeded: false });
    expect(checkBudget(1.01, 1)).toEqual({ exceeded: true, spentUsd: 1.01, budgetUsd: 1 });
    expect(checkBudget(0.01, 0)).toEqual({ exceeded: true, spentUsd: 0.01, budgetUsd: 0 });
  });

  it("gives a full budget on top of what is spent when extended, however far the last run overshot", () => {
    expect(extendedBudgetUsd(1.2, 1)).toBe(2.2);
    expect(extendedBudgetUsd(7.5, 1)).toBe(8.5);
    expect(extendedBudgetUsd(0.1 + 0.2, 1)).toBe(1.3);
    expect(checkBudget(7.5, extendedBudgetUsd(7.5, 1)).exceeded).toBe(false);
  });

  it("names every step a budget stop can hold back", () => {
    expect([...BUDGET_STEPS]).toEqual(["implement", "revise", "continue", "fix", "review"]);
  });
});

describe("a dev round that passed the budget", () => {
  it("pauses before its review: the review waits for Continue and no one hears of a review that is not running", () => {
    const finished = reduceTask(task("running"), { type: "dev.finished", commit: "abc1234", overBudget: { spentUsd: 1.2, budgetUsd: 1 } });
    if (!finished.ok) throw new Error(`refused: ${finished.refusal.reason}`);
    expect(finished.task).toMatchObject({ status: "paused", pausedStep: "review", version: 4 });
    expect(jobsOf(finished.effects)).toEqual([]);
    expect(notesOf(finished.effects)).toEqual(['task.budget-exceeded {"taskId":7,"spentUsd":1.2,"budgetUsd":1}']);
    const resumed = reduceTask(finished.task, EXTENDED);
    if (!resumed.ok) throw new Error(`refused: ${resumed.refusal.reason}`);
    expect(jobsOf(resumed.effects)).toEqual(['review:7-review-5:{"v":1,"taskId":7,"kind":"diff","round":2}']);
  });

  it("within the budget goes to review as before", () => {
    const finished = reduceTask(task("running"), { type: "dev.finished", commit: "abc1234" });
    if (!finished.ok) throw new Error(`refused: ${finished.refusal.reason}`);
    expect(finished.task.status).toBe("running");
    expect(notesOf(finished.effects)).toEqual(['task.dev-to-review {"taskId":7,"round":2}']);
  });
});
