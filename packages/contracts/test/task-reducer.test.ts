import { describe, expect, it } from "vitest";
import {
  GITEA_STATUSES,
  TELEGRAM_STATUSES,
  reduceTask,
  type GiteaEvent,
  type TaskEffect,
  type TaskSnapshot,
  type TaskStatus,
  type TelegramEvent,
} from "../src/index.ts";

function telegramTask(status: TaskStatus, over: Partial<TaskSnapshot> = {}): TaskSnapshot {
  const analysing = status === "collecting";
  return {
    id: 7, source: "telegram", status, version: 3, turnCount: 1, pendingTurns: analysing ? 1 : 0,
    analysing, skipRequested: false, round: 1, maxTurns: 5, maxRounds: 3, ...over,
  };
}

function giteaTask(status: TaskStatus, over: Partial<TaskSnapshot> = {}): TaskSnapshot {
  return {
    id: 9, source: "gitea", status, version: 2, turnCount: 0, pendingTurns: 0, analysing: false,
    skipRequested: false, round: 0, maxTurns: 5, maxRounds: 3,
    command: { kind: "implement", target: "issue", targetKey: "acme/app#4" }, ...over,
  };
}

const done = { consumedTurns: 1, forced: false };
const MAJOR = { severity: "major", file: "src/a.ts", line: 3, text: "greets nobody" } as const;
const MINOR = { severity: "minor", file: null, text: "typo in the comment" } as const;
const BLOCKING = { severity: "blocking", file: "src/b.ts", text: "deletes the tests" } as const;
const TELEGRAM_EVENTS: TelegramEvent[] = [
  { type: "turn.received" },
  { type: "analyst.asked", questions: ["Which repo?"], ...done },
  { type: "analyst.drafted", ...done },
  { type: "analyst.repos-missing", missing: ["acme/nope"], ...done },
  { type: "analyst.aborted", reason: "not code" },
  { type: "analyst.failed", problem: "no-phase" },
  { type: "user.skipped" },
  { type: "user.approved" },
  { type: "user.cancelled" },
  { type: "user.retried" },
  { type: "user.continued" },
  { type: "dev.started" },
  { type: "dev.finished", commit: "1a2b3c4" },
  { type: "review.passed", branch: "ratatoskr/7-greeting", commit: "1a2b3c4" },
  { type: "review.rejected", findings: [MAJOR, MINOR] },
  { type: "run.failed", reason: "tests fail" },
  { type: "run.timed_out" },
];

const GITEA_EVENTS: GiteaEvent[] = [
  { type: "command.authorized" },
  { type: "command.rejected", reason: "read-only user" },
  { type: "command.started" },
  { type: "run.succeeded" },
  { type: "run.failed", reason: "boom" },
  { type: "user.cancelled" },
];

const jobsOf = (effects: TaskEffect[]) =>
  effects.flatMap((e) => (e.type === "enqueue" ? [`${e.job.queue}:${JSON.stringify(e.job.data)}`] : []));
const notesOf = (effects: TaskEffect[]) => effects.flatMap((e) => (e.type === "notify" ? [e.template] : []));

/** Every legal Telegram transition: from, event → to, jobs, notifications. */
const TELEGRAM_LEGAL: Array<[TaskStatus, TelegramEvent["type"], TaskStatus, string[], string[]]> = [
  ["draft", "turn.received", "collecting", ['analyst:{"v":1,"taskId":7,"kind":"turn"}'], []],
  ["collecting", "turn.received", "collecting", [], []],
  ["ready", "turn.received", "collecting", ['analyst:{"v":1,"taskId":7,"kind":"turn"}'], []],
  ["draft", "user.skipped", "collecting", ['analyst:{"v":1,"taskId":7,"kind":"force-draft"}'], []],
  ["collecting", "user.skipped", "collecting", [], []],
  ["collecting", "analyst.asked", "collecting", [], ["task.questions"]],
  ["collecting", "analyst.drafted", "ready", [], ["task.draft-ready"]],
  ["collecting", "analyst.repos-missing", "collecting", [], ["task.repo-not-found"]],
  ["collecting", "analyst.aborted", "aborted", [], ["task.aborted"]],
  ["collecting", "analyst.failed", "collecting", [], ["task.analyst-error"]],
  ["ready", "user.approved", "approved", ['dev:{"v":1,"taskId":7,"kind":"implement","round":1}'], ["task.approved"]],
  ["draft", "user.cancelled", "cancelled", [], ["task.cancelled"]],
  ["collecting", "user.cancelled", "cancelled", [], ["task.cancelled"]],
  ["ready", "user.cancelled", "cancelled", [], ["task.cancelled"]],
  ["approved", "user.cancelled", "cancelled", [], ["task.cancelled"]],
  ["running", "user.cancelled", "cancelled", [], ["task.cancelled"]],
  ["paused", "user.cancelled", "cancelled", [], ["task.cancelled"]],
  ["ready", "user.retried", "collecting", ['analyst:{"v":1,"taskId":7,"kind":"turn"}'], ["task.retried"]],
  ["failed", "user.retried", "approved", ['dev:{"v":1,"taskId":7,"kind":"implement","round":1}'], ["task.retried"]],
  ["timeout", "user.retried", "approved", ['dev:{"v":1,"taskId":7,"kind":"implement","round":1}'], ["task.retried"]],
  ["failed", "user.continued", "approved", ['dev:{"v":1,"taskId":7,"kind":"continue","round":1}'], ["task.continued"]],
  ["timeout", "user.continued", "approved", ['dev:{"v":1,"taskId":7,"kind":"continue","round":1}'], ["task.continued"]],
  ["approved", "dev.started", "running", [], ["task.running"]],
  ["running", "dev.started", "running", [], []],
  ["running", "dev.finished", "running", ['review:{"v":1,"taskId":7,"kind":"diff","round":1}'], ["task.dev-to-review"]],
  ["running", "review.passed", "success", [], ["task.success"]],
  ["running", "review.rejected", "running", ['dev:{"v":1,"taskId":7,"kind":"revise","round":2}'], ["task.review-to-dev"]],
  ["approved", "run.failed", "failed", ['postmortem:{"v":1,"taskId":7,"cause":"failed"}'], ["task.failed"]],
  ["running", "run.failed", "failed", ['postmortem:{"v":1,"taskId":7,"cause":"failed"}'], ["task.failed"]],
  ["running", "run.timed_out", "timeout", ['postmortem:{"v":1,"taskId":7,"cause":"timeout"}'], ["task.timeout"]],
];

const GITEA_LEGAL: Array<[TaskStatus, GiteaEvent["type"], TaskStatus, string[]]> = [
  // Joining the line: only its own place and those behind it can have moved.
  ["received", "command.authorized", "queued", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4","joined":9}']],
  // Turned away at authorization: a command behind it may have waited for it.
  ["received", "command.rejected", "rejected", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
  ["queued", "command.rejected", "rejected", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
  ["queued", "command.started", "running", ['dev:{"v":1,"taskId":9,"kind":"implement","round":1}']],
  ["running", "run.succeeded", "success", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
  ["running", "run.failed", "failed", ['postmortem:{"v":1,"taskId":9,"cause":"failed"}', 'intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
  ["queued", "user.cancelled", "cancelled", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
  ["running", "user.cancelled", "cancelled", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
  ["paused", "user.cancelled", "cancelled", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
];

describe("telegram lifecycle", () => {
  it.each(TELEGRAM_LEGAL)("%s + %s → %s", (from, eventType, to, jobs, notes) => {
    const event = TELEGRAM_EVENTS.find((e) => e.type === eventType)!;
    const result = reduceTask(telegramTask(from), event);
    if (!result.ok) throw new Error(`refused: ${result.refusal.reason}`);
    expect(result.task.status).toBe(to);
    expect(result.task.version).toBe(4);
    expect(jobsOf(result.effects)).toEqual(jobs);
    expect(notesOf(result.effects)).toEqual(notes);
  });

  const legal = new Set(TELEGRAM_LEGAL.map(([from, e]) => `${from}|${e}`));
  const illegal = TELEGRAM_STATUSES.flatMap((s) =>
    TELEGRAM_EVENTS.filter((e) => !legal.has(`${s}|${e.type}`)).map((e) => [s, e.type, e] as const),
  );
  it.each(illegal)("refuses %s + %s", (from, _type, event) => {
    const result = reduceTask(telegramTask(from), event);
    expect(result.ok).toBe(false);
  });

  it("names the refusals a person is told about", () => {
    const reason = (status: TaskStatus, event: TelegramEvent, over: Partial<TaskSnapshot> = {}) => {
      const r = reduceTask(telegramTask(status, over), event);
      return r.ok ? "accepted" : r.refusal.reason;
    };
    expect(reason("success", { type: "user.retried" })).toBe("not-retryable");
    expect(reason("cancelled", { type: "user.retried" })).toBe("not-retryable");
    expect(reason("ready", { type: "dev.started" })).toBe("not-approved");
    expect(reason("approved", { type: "turn.received" })).toBe("already-approved");
    expect(reason("approved", { type: "user.approved" })).toBe("already-approved");
    expect(reason("collecting", { type: "user.approved" })).toBe("not-ready");
    expect(reason("success", { type: "user.cancelled" })).toBe("nothing-to-cancel");
    expect(reason("collecting", { type: "turn.received" }, { turnCount: 5 })).toBe("turn-limit");
    expect(reason("running", { type: "user.continued" })).toBe("not-continuable");
  });

  it("rejects the Gitea front phase's events on a Telegram task, and the other way round", () => {
    const started = reduceTask(telegramTask("approved"), { type: "command.started" });
    expect(started.ok || started.refusal.reason).toBe("wrong-source");
    const approved = reduceTask(giteaTask("running"), { type: "user.approved" });
    expect(approved.ok || approved.refusal.reason).toBe("wrong-source");
  });
});

describe("one analysis at a time per chat", () => {
  it("keeps turns that arrive while the analyst thinks and analyses them next, in one job", () => {
    let task = telegramTask("draft");
    const first = reduceTask(task, { type: "turn.received" });
    if (!first.ok) throw new Error("refused");
    task = first.task;
    expect(jobsOf(first.effects)).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      const more = reduceTask(task, { type: "turn.received" });
      if (!more.ok) throw new Error("refused");
      expect(more.effects).toEqual([]);
      task = more.task;
    }
    expect(task.pendingTurns).toBe(3);
    const asked = reduceTask(task, { type: "analyst.asked", questions: ["Q"], consumedTurns: 1, forced: false });
    if (!asked.ok) throw new Error("refused");
    expect(jobsOf(asked.effects)).toEqual(['analyst:{"v":1,"taskId":7,"kind":"turn"}']);
    expect(notesOf(asked.effects)).toEqual([]);
    expect(asked.task).toMatchObject({ analysing: true, pendingTurns: 2 });
    const drafted = reduceTask(asked.task, { type: "analyst.drafted", consumedTurns: 2, forced: false });
    if (!drafted.ok) throw new Error("refused");
    expect(drafted.task).toMatchObject({ status: "ready", analysing: false, pendingTurns: 0 });
    expect(notesOf(drafted.effects)).toEqual(["task.draft-ready"]);
  });

  it("runs a forced draft after the running analysis when /skip arrives mid-analysis", () => {
    const skipped = reduceTask(telegramTask("collecting"), { type: "user.skipped" });
    if (!skipped.ok) throw new Error("refused");
    expect(skipped.effects).toEqual([]);
    const asked = reduceTask(skipped.task, { type: "analyst.asked", questions: ["Q"], consumedTurns: 1, forced: false });
    if (!asked.ok) throw new Error("refused");
    expect(jobsOf(asked.effects)).toEqual(['analyst:{"v":1,"taskId":7,"kind":"force-draft"}']);
    const drafted = reduceTask(asked.task, { type: "analyst.drafted", consumedTurns: 0, forced: true });
    if (!drafted.ok) throw new Error("refused");
    expect(drafted.task).toMatchObject({ status: "ready", skipRequested: false, analysing: false });
  });

  it("fails the task when review rounds run out, telling the person the remaining findings", () => {
    const result = reduceTask(telegramTask("running", { round: 3 }), { type: "review.rejected", findings: [BLOCKING, MINOR, MAJOR] });
    if (!result.ok) throw new Error("refused");
    expect(result.task.status).toBe("failed");
    expect(jobsOf(result.effects)).toEqual(['postmortem:{"v":1,"taskId":7,"cause":"failed"}']);
    expect(result.effects.find((e) => e.type === "notify")).toMatchObject({
      template: "task.failed",
      params: {
        reason: expect.stringContaining("after 3 rounds (2 findings)"),
        findings: "[blocking] src/b.ts — deletes the tests\n[major] src/a.ts:3 — greets nobody",
      },
    });
  });

  it("sends a rejected review back to dev for the next round with the number of findings that matter", () => {
    const result = reduceTask(telegramTask("running", { round: 1 }), { type: "review.rejected", findings: [MAJOR, MINOR] });
    if (!result.ok) throw new Error("refused");
    expect(result.task).toMatchObject({ status: "running", round: 2 });
    expect(result.effects.find((e) => e.type === "notify")).toMatchObject({
      template: "task.review-to-dev",
      params: { taskId: 7, round: 1, findings: 1 },
    });
  });

  it("tells the person the pushed branch and commit on success", () => {
    const result = reduceTask(telegramTask("running", { round: 2 }), { type: "review.passed", branch: "ratatoskr/7-x", commit: "abc1234" });
    if (!result.ok) throw new Error("refused");
    expect(result.effects).toEqual([
      { type: "notify", template: "task.success", params: { taskId: 7, round: 2, branch: "ratatoskr/7-x", commit: "abc1234" } },
    ]);
  });

  it("gives every follow-up a deterministic job id from the new version", () => {
    const a = reduceTask(telegramTask("ready"), { type: "user.approved" });
    const b = reduceTask(telegramTask("ready"), { type: "user.approved" });
    const ids = (r: typeof a) => (r.ok ? r.effects.flatMap((e) => (e.type === "enqueue" ? [e.job.jobId] : [])) : []);
    expect(ids(a)).toEqual(["7-dev-4"]);
    expect(ids(b)).toEqual(ids(a));
  });
});

describe("gitea lifecycle", () => {
  it.each(GITEA_LEGAL)("%s + %s → %s", (from, eventType, to, jobs) => {
    const event = GITEA_EVENTS.find((e) => e.type === eventType)!;
    const result = reduceTask(giteaTask(from), event);
    if (!result.ok) throw new Error(`refused: ${result.refusal.reason}`);
    expect(result.task.status).toBe(to);
    expect(jobsOf(result.effects)).toEqual(jobs);
  });

  const legal = new Set(GITEA_LEGAL.map(([from, e]) => `${from}|${e}`));
  const illegal = GITEA_STATUSES.flatMap((s) =>
    GITEA_EVENTS.filter((e) => !legal.has(`${s}|${e.type}`)).map((e) => [s, e.type, e] as const),
  );
  it.each(illegal)("refuses %s + %s", (from, _type, event) => {
    expect(reduceTask(giteaTask(from), event).ok).toBe(false);
  });

  it.each([
    ["cancel", "command.answered", "success", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
    ["cancel", "command.rejected", "rejected", ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}']],
    ["status", "command.answered", "success", []],
    ["status", "command.rejected", "rejected", []],
    ["continue", "command.answered", "success", []],
  ] as const)("/agent %s leaving received (%s → %s) looks at its line again only if it held it back", (kind, eventType, to, jobs) => {
    const task = giteaTask("received", { command: { kind, target: "issue", targetKey: "acme/app#4" } });
    const event: GiteaEvent = eventType === "command.answered" ? { type: eventType } : { type: eventType, reason: "permission" };
    const result = reduceTask(task, event);
    if (!result.ok) throw new Error(`refused: ${result.refusal.reason}`);
    expect(result.task.status).toBe(to);
    expect(jobsOf(result.effects)).toEqual(jobs);
  });

  it.each([
    ["plan", "issue", 'analyst:{"v":1,"taskId":9,"kind":"plan"}'],
    ["discuss", "issue", 'analyst:{"v":1,"taskId":9,"kind":"discuss"}'],
    ["iterate", "issue", 'analyst:{"v":1,"taskId":9,"kind":"plan"}'],
    ["iterate", "pr", 'dev:{"v":1,"taskId":9,"kind":"revise","round":1}'],
    ["fix", "pr", 'dev:{"v":1,"taskId":9,"kind":"fix","round":1}'],
  ] as const)("starts /agent %s on an %s with the right agent", (kind, target, job) => {
    const task = giteaTask("queued", { command: { kind, target, targetKey: "acme/app#4" } });
    const result = reduceTask(task, { type: "command.started" });
    expect(result.ok && jobsOf(result.effects)).toEqual([job]);
  });
});

describe("one pipeline phase for every door", () => {
  const events: Array<Parameters<typeof reduceTask>[1]> = [
    { type: "dev.finished", commit: "abc1234" },
    { type: "review.rejected", findings: [MAJOR] },
    { type: "run.failed", reason: "tests fail" },
    { type: "run.timed_out", reason: "went quiet" },
    { type: "user.cancelled" },
    { type: "budget.exceeded", spentUsd: 2, budgetUsd: 1, step: "continue" },
  ];
  it.each(events)("moves a running task the same way whichever door it came through: %o", (event) => {
    const telegram = reduceTask(telegramTask("running"), event);
    const gitea = reduceTask(giteaTask("running", { round: 1 }), event);
    if (!telegram.ok || !gitea.ok) throw new Error("refused");
    expect(gitea.task.status).toBe(telegram.task.status);
    expect(gitea.task.round).toBe(telegram.task.round);
    expect(gitea.task.failureReason).toEqual(telegram.task.failureReason);
    // The steps the pipeline runs next are the same; a command also frees its issue's line.
    const pipelineJobs = (effects: TaskEffect[]) => jobsOf(effects).filter((j) => !j.startsWith("intake:")).map((j) => j.replace(/"taskId":\d+/, ""));
    expect(pipelineJobs(gitea.effects)).toEqual(pipelineJobs(telegram.effects));
    expect(notesOf(gitea.effects)).toEqual(notesOf(telegram.effects));
  });

  it("stores why a task failed or timed out on the task, with the findings that were left", () => {
    const out = reduceTask(giteaTask("running", { round: 3 }), { type: "review.rejected", findings: [MAJOR, MINOR] });
    expect(out.ok && out.task.failureReason).toBe("review still failing after 3 rounds (1 findings):\n- [major] src/a.ts:3 — greets nobody");
    const failed = reduceTask(telegramTask("running"), { type: "run.failed", reason: "push refused" });
    expect(failed.ok && failed.task.failureReason).toBe("push refused");
    const timedOut = reduceTask(telegramTask("running"), { type: "run.timed_out", reason: "went quiet" });
    expect(timedOut.ok && timedOut.task.failureReason).toBe("went quiet");
  });

  it("delivers where the door delivers: a Telegram task ends at the passed review, a command publishes first", () => {
    const telegram = reduceTask(telegramTask("running"), { type: "review.passed", branch: "b", commit: "c" });
    expect(telegram.ok && telegram.task.status).toBe("success");
    const gitea = reduceTask(giteaTask("running", { round: 1 }), { type: "review.passed", minor: [] });
    expect(gitea.ok && [gitea.task.status, jobsOf(gitea.effects)]).toEqual(["running", ['intake:{"v":1,"kind":"publish","taskId":9}']]);
  });
});

describe("a failed analysis with work still pending", () => {
  const fail = (problem: "worker-died" | "unavailable" | "internal" | "invalid-json", failedInARow: number, over: Partial<TaskSnapshot> = {}) =>
    reduceTask(telegramTask("collecting", over), { type: "analyst.failed", problem, failedInARow });

  it("analyses the pending turns again at once when the machinery failed, and says so", () => {
    for (const problem of ["worker-died", "unavailable", "internal"] as const) {
      const result = fail(problem, 1);
      expect(result.ok && result.task).toMatchObject({ status: "collecting", analysing: true, pendingTurns: 1 });
      expect(result.ok && jobsOf(result.effects)).toEqual(['analyst:{"v":1,"taskId":7,"kind":"turn"}']);
      expect(result.ok && result.effects.find((e) => e.type === "notify")).toMatchObject({ params: { problem, then: "retrying" } });
    }
  });

  it("keeps a pending /skip a forced draft", () => {
    const result = fail("worker-died", 1, { pendingTurns: 0, skipRequested: true });
    expect(result.ok && jobsOf(result.effects)).toEqual(['analyst:{"v":1,"taskId":7,"kind":"force-draft"}']);
  });

  it("waits for the person after three failures in a row, on an unusable answer, or with nothing pending", () => {
    for (const result of [fail("worker-died", 3), fail("invalid-json", 1), fail("worker-died", 1, { pendingTurns: 0 })]) {
      expect(result.ok && result.task).toMatchObject({ analysing: false });
      expect(result.ok && jobsOf(result.effects)).toEqual([]);
      expect(result.ok && result.effects.find((e) => e.type === "notify")).toMatchObject({ params: { then: "waiting" } });
    }
  });
});
