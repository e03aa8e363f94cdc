import { describe, expect, it } from "vitest";
import {
  GITEA_STATUSES,
  reduceTask,
  type GiteaCommandKind,
  type GiteaEvent,
  type PipelineEvent,
  type TaskEffect,
  type TaskSnapshot,
} from "../src/index.ts";

function command(kind: GiteaCommandKind, target: "issue" | "pr", over: Partial<TaskSnapshot> = {}): TaskSnapshot {
  return {
    id: 9, source: "gitea", status: "running", version: 4, turnCount: 0, pendingTurns: 0, analysing: false,
    skipRequested: false, round: 1, maxTurns: 0, maxRounds: 3,
    command: { kind, target, targetKey: "acme/app#4" }, ...over,
  };
}

const jobsOf = (effects: TaskEffect[]) =>
  effects.flatMap((e) => (e.type === "enqueue" ? [`${e.job.queue}:${JSON.stringify(e.job.data)}`] : []));

const MAJOR = { severity: "major", file: "a.ts", line: 1, text: "wrong" } as const;
const DISPATCH = 'intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4"}';
const PUBLISH = 'intake:{"v":1,"kind":"publish","taskId":9}';

function apply(task: TaskSnapshot, event: GiteaEvent | PipelineEvent) {
  const result = reduceTask(task, event);
  if (!result.ok) throw new Error(`refused: ${result.refusal.reason}`);
  return { status: result.task.status, round: result.task.round, jobs: jobsOf(result.effects) };
}

describe("gitea command rounds (G3)", () => {
  it("starts a command in round 1", () => {
    expect(apply(command("implement", "issue", { status: "queued", round: 0 }), { type: "command.started" })).toEqual({
      status: "running",
      round: 1,
      jobs: ['dev:{"v":1,"taskId":9,"kind":"implement","round":1}'],
    });
  });

  it("sends finished dev work to the reviewer, and a drafted plan to plan review, in the same round", () => {
    expect(apply(command("implement", "issue", { round: 2 }), { type: "dev.finished", commit: "abc1234", summary: "s" })).toEqual({
      status: "running",
      round: 2,
      jobs: ['review:{"v":1,"taskId":9,"kind":"diff","round":2}'],
    });
    expect(apply(command("iterate", "issue"), { type: "plan.drafted", plan: "p" }).jobs).toEqual([
      'review:{"v":1,"taskId":9,"kind":"plan","round":1}',
    ]);
    expect(apply(command("iterate", "pr"), { type: "dev.finished", commit: "abc1234", summary: "s" }).jobs).toEqual([
      'review:{"v":1,"taskId":9,"kind":"diff","round":1}',
    ]);
  });

  it("goes back to dev (or the planner) with the next round while rounds are left", () => {
    expect(apply(command("implement", "issue"), { type: "review.rejected", findings: [MAJOR] })).toEqual({
      status: "running",
      round: 2,
      jobs: ['dev:{"v":1,"taskId":9,"kind":"revise","round":2}'],
    });
    expect(apply(command("plan", "issue", { maxRounds: 4 }), { type: "review.rejected", findings: [MAJOR] })).toEqual({
      status: "running",
      round: 2,
      jobs: ['analyst:{"v":1,"taskId":9,"kind":"plan"}'],
    });
  });

  it("fails when the rounds are spent, and a PR iterate after its one round; the next command may start; a postmortem follows", () => {
    expect(apply(command("implement", "issue", { round: 3 }), { type: "review.rejected", findings: [MAJOR] })).toEqual({
      status: "failed",
      round: 3,
      jobs: ['postmortem:{"v":1,"taskId":9,"cause":"failed"}', DISPATCH],
    });
    expect(apply(command("iterate", "pr"), { type: "review.rejected", findings: [MAJOR] }).status).toBe("failed");
  });

  it("publishes after a passed review or a drafted answer", () => {
    expect(apply(command("implement", "issue"), { type: "review.passed", minor: [] }).jobs).toEqual([PUBLISH]);
    expect(apply(command("discuss", "issue"), { type: "answer.drafted", answer: "a" }).jobs).toEqual([PUBLISH]);
  });

  it("times out with the work kept (P4): the line moves on and a postmortem follows", () => {
    expect(apply(command("implement", "issue", { round: 2 }), { type: "run.timed_out" })).toEqual({
      status: "timeout",
      round: 2,
      jobs: ['postmortem:{"v":1,"taskId":9,"cause":"timeout"}', DISPATCH],
    });
  });

  it("a continued timeout queues again and, when its turn comes, resumes dev in the round it stopped in", () => {
    const continued = reduceTask(command("implement", "issue", { status: "timeout", round: 2 }), { type: "user.continued" });
    if (!continued.ok) throw new Error(continued.refusal.reason);
    expect({ status: continued.task.status, round: continued.task.round, jobs: jobsOf(continued.effects) }).toEqual({
      status: "queued",
      round: 2,
      jobs: ['intake:{"v":1,"kind":"dispatch-next","targetKey":"acme/app#4","joined":9}'],
    });
    expect(apply(continued.task, { type: "command.started" })).toEqual({
      status: "running",
      round: 2,
      jobs: ['dev:{"v":1,"taskId":9,"kind":"continue","round":2}'],
    });
    expect(apply(command("iterate", "pr", { status: "queued", round: 1 }), { type: "command.started" }).jobs).toEqual([
      'dev:{"v":1,"taskId":9,"kind":"continue","round":1}',
    ]);
  });

  it.each(GITEA_STATUSES.filter((s) => s !== "timeout"))("refuses %s + user.continued: only a timeout is continued", (status) => {
    expect(reduceTask(command("implement", "issue", { status }), { type: "user.continued" }).ok).toBe(false);
  });

  it.each(GITEA_STATUSES.filter((s) => s !== "running"))("refuses %s + run.timed_out", (status) => {
    expect(reduceTask(command("implement", "issue", { status }), { type: "run.timed_out" }).ok).toBe(false);
  });

  const events: GiteaEvent[] = [
    { type: "dev.finished", commit: "abc1234", summary: "s" },
    { type: "plan.drafted", plan: "p" },
    { type: "answer.drafted", answer: "a" },
    { type: "review.passed", minor: [] },
    { type: "review.rejected", findings: [MAJOR] },
  ];
  const notRunning = GITEA_STATUSES.filter((s) => s !== "running");
  it.each(notRunning.flatMap((status) => events.map((event) => [status, event.type, event] as const)))(
    "refuses %s + %s: a late report of a cancelled or finished command changes nothing",
    (status, _type, event) => {
      expect(reduceTask(command("implement", "issue", { status }), event).ok).toBe(false);
    },
  );
});
