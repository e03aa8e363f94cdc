import { jobRequest, type AnyJobRequest } from "../jobs/job-catalog.ts";
import { followUpJobId } from "../jobs/job-id.ts";
import { QUEUE } from "../queues.ts";
import { postmortemJob } from "./postmortem-job.ts";
import type { TaskEffect } from "./task-effects.ts";
import { budgetTransition } from "./budget-transitions.ts";
import type { BudgetEvent, GiteaEvent, PipelineEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import type { GiteaStatus } from "./task-status.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

const STATUS_COMMENT: TaskEffect = { type: "notify", template: "command.status", params: {} };

function ok(
  task: TaskSnapshot,
  status: GiteaStatus,
  effects: TaskEffect[],
  patch: Partial<Pick<TaskSnapshot, "round" | "budgetUsd">> = {},
): TransitionResult {
  return {
    ok: true,
    task: { ...task, ...patch, status, version: task.version + 1 },
    effects: [STATUS_COMMENT, ...effects],
  };
}

/** The job that finishes a command where only intake can: open the PR, post the plan (G3). */
function publishJob(task: TaskSnapshot): TaskEffect {
  const jobId = followUpJobId(task.id, "publish", task.version + 1);
  return { type: "enqueue", job: jobRequest(QUEUE.intake, { v: 1, kind: "publish", taskId: task.id }, jobId) };
}

/** `/agent plan` and an issue's `/agent iterate` write plans; the other work commands change code. */
export function isPlanning(command: TaskSnapshot["command"]): boolean {
  return command?.kind === "plan" || (command?.target === "issue" && command.kind === "iterate");
}

/** A PR's `/agent iterate` resumes the sessions once: one dev turn, one review, no more rounds. */
function isPullIterate(task: TaskSnapshot): boolean {
  return task.command?.kind === "iterate" && task.command.target === "pr";
}

function reviewJob(task: TaskSnapshot): TaskEffect {
  const kind = isPlanning(task.command) ? "plan" : "diff";
  const jobId = followUpJobId(task.id, "review", task.version + 1);
  return { type: "enqueue", job: jobRequest(QUEUE.review, { v: 1, taskId: task.id, kind, round: task.round }, jobId) };
}

function reviseJob(task: TaskSnapshot, round: number): TaskEffect {
  const jobId = followUpJobId(task.id, isPlanning(task.command) ? "analyst" : "dev", task.version + 1);
  return {
    type: "enqueue",
    job: isPlanning(task.command)
      ? jobRequest(QUEUE.analyst, { v: 1, taskId: task.id, kind: "plan" }, jobId)
      : jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind: "revise", round }, jobId),
  };
}

function continueJob(task: TaskSnapshot): TaskEffect {
  const jobId = followUpJobId(task.id, "dev", task.version + 1);
  return { type: "enqueue", job: jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind: "continue", round: task.round }, jobId) };
}

/** After a command settles, the next queued command of the same issue/PR may start (G4). */
function dispatchNext(task: TaskSnapshot): TaskEffect {
  const targetKey = task.command?.targetKey ?? "";
  const jobId = followUpJobId(task.id, "dispatch", task.version + 1);
  return { type: "enqueue", job: jobRequest(QUEUE.intake, { v: 1, kind: "dispatch-next", targetKey }, jobId) };
}

/** The first agent job of a command: plans go to the analyst, code changes to dev. */
function firstJob(task: TaskSnapshot): AnyJobRequest {
  const command = task.command;
  if (!command) throw new Error(`gitea task ${task.id} has no command`);
  const jobId = (step: string) => followUpJobId(task.id, step, task.version + 1);
  switch (command.kind) {
    case "plan":
      return jobRequest(QUEUE.analyst, { v: 1, taskId: task.id, kind: "plan" }, jobId("analyst"));
    case "discuss":
      return jobRequest(QUEUE.analyst, { v: 1, taskId: task.id, kind: "discuss" }, jobId("analyst"));
    case "iterate":
      return command.target === "issue"
        ? jobRequest(QUEUE.analyst, { v: 1, taskId: task.id, kind: "plan" }, jobId("analyst"))
        : jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind: "revise", round: 1 }, jobId("dev"));
    case "implement":
      return jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind: "implement", round: 1 }, jobId("dev"));
    case "fix":
      return jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind: "fix", round: 1 }, jobId("dev"));
    case "status":
    case "cancel":
    case "continue":
    case "stop":
      throw new Error(`gitea task ${task.id}: /agent ${command.kind} is answered by intake, never started`);
  }
}

/** `/agent status`, `cancel`, `continue` and `stop`: answered at once, never queued (G7, P5). */
function isControl(task: TaskSnapshot): boolean {
  const kind = task.command?.kind;
  return kind === "status" || kind === "cancel" || kind === "continue" || kind === "stop";
}

/**
 * The budget pause (P5) as on every door; the status comment shows it (the notify effect), and a
 * stopped command frees its issue/PR's line.
 */
function budgetStep(task: TaskSnapshot, event: BudgetEvent): TransitionResult {
  const result = budgetTransition(task, event);
  if (!result.ok || event.type !== "user.budget-stopped") return result;
  return { ...result, effects: [...result.effects, dispatchNext(task)] };
}

export function giteaTransition(task: TaskSnapshot, event: GiteaEvent | PipelineEvent): TransitionResult {
  const status = task.status as GiteaStatus;
  switch (event.type) {
    case "budget.exceeded":
    case "user.budget-extended":
    case "user.budget-stopped":
      return budgetStep(task, event);
    case "run.timed_out":
      // P4: the work so far is pushed and the session kept; the line moves on meanwhile.
      if (status !== "running") return refuse(task, event.type, "illegal");
      return ok(task, "timeout", [dispatchNext(task), postmortemJob(task, "timeout")]);
    case "user.continued":
      // Back in its issue/PR's line: it starts when its turn comes, in the round it stopped in.
      if (status !== "timeout") return refuse(task, event.type, "not-continuable");
      return ok(task, "queued", [dispatchNext(task)]);
    case "command.authorized":
      if (status !== "received" || isControl(task)) return refuse(task, event.type, "illegal");
      return ok(task, "queued", [dispatchNext(task)], { budgetUsd: event.budgetUsd ?? null });
    case "command.answered":
      if (status !== "received" || !isControl(task)) return refuse(task, event.type, "illegal");
      return ok(task, "succeeded", []);
    case "command.rejected":
      // From `queued`: a command refused when its turn came (e.g. an agent PR opened meanwhile).
      if (status === "queued") return ok(task, "rejected", [dispatchNext(task)]);
      if (status !== "received") return refuse(task, event.type, "illegal");
      return ok(task, "rejected", []);
    case "command.started":
      if (status !== "queued") return refuse(task, event.type, "illegal");
      // A continued timeout (it has a round) resumes its dev session in the round it stopped in (P4).
      if (task.round > 0 && !isPlanning(task.command)) return ok(task, "running", [continueJob(task)]);
      return ok(task, "running", [{ type: "enqueue", job: firstJob({ ...task, round: 1 }) }], { round: 1 });
    case "command.dev-finished":
    case "command.plan-drafted":
      if (status !== "running") return refuse(task, event.type, "illegal");
      return ok(task, "running", [reviewJob(task)]);
    case "command.review-passed":
    case "command.answer-drafted":
      if (status !== "running") return refuse(task, event.type, "illegal");
      return ok(task, "running", [publishJob(task)]);
    case "command.review-rejected":
      if (status !== "running") return refuse(task, event.type, "illegal");
      // Out of rounds: what was pushed stays, the command fails with the findings (the caller's reason).
      if (task.round >= task.maxRounds || isPullIterate(task))
        return ok(task, "failed", [dispatchNext(task), postmortemJob(task, "failed")]);
      return ok(task, "running", [reviseJob(task, task.round + 1)], { round: task.round + 1 });
    case "command.succeeded":
      if (status !== "running") return refuse(task, event.type, "illegal");
      return ok(task, "succeeded", [dispatchNext(task)]);
    case "command.failed":
    case "command.interrupted":
      if (status !== "running") return refuse(task, event.type, "illegal");
      // P6 on this door too: why it failed and what to do, as a reply comment.
      return ok(task, "failed", [dispatchNext(task), postmortemJob(task, "failed")]);
    case "command.cancelled":
      if (status !== "queued" && status !== "running" && status !== "paused") return refuse(task, event.type, "nothing-to-cancel");
      return ok(task, "cancelled", [dispatchNext(task)]);
  }
}
