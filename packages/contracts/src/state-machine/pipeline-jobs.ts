import { jobRequest, type AnyJobRequest } from "../jobs/job-catalog.ts";
import { followUpJobId } from "../jobs/job-id.ts";
import { QUEUE } from "../queues.ts";
import type { TaskEffect } from "./task-effects.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";

/**
 * The door's data the pipeline reads. A Gitea command holds a place in its issue/PR's line (G4),
 * and is delivered by publishing (intake opens the PR or posts the plan, G3); a Telegram task is
 * delivered by the push of its branch.
 */
export function holdsLine(task: TaskSnapshot): boolean {
  return task.command !== undefined;
}

export function deliversByPublishing(task: TaskSnapshot): boolean {
  return task.command !== undefined;
}

/** `/agent plan` and an issue's `/agent iterate` write plans; the other work commands change code. */
export function isPlanning(command: TaskSnapshot["command"]): boolean {
  return command?.kind === "plan" || (command?.target === "issue" && command.kind === "iterate");
}

/** A PR's `/agent iterate` resumes the sessions once: one dev turn, one review, no more rounds. */
export function isPullIterate(task: TaskSnapshot): boolean {
  return task.command?.kind === "iterate" && task.command.target === "pr";
}

function enqueue(job: AnyJobRequest): TaskEffect {
  return { type: "enqueue", job };
}

/** The review of the round that just finished: of its plan, or of its pushed diff. */
export function reviewJob(task: TaskSnapshot): TaskEffect {
  const kind = isPlanning(task.command) ? "plan" : "diff";
  return enqueue(jobRequest(QUEUE.review, { v: 1, taskId: task.id, kind, round: task.round }, followUpJobId(task.id, "review", task.version + 1)));
}

/** The next round after a rejected review: the planner for a plan, else a dev `revise`. */
export function reviseJob(task: TaskSnapshot, round: number): TaskEffect {
  if (isPlanning(task.command)) {
    return enqueue(jobRequest(QUEUE.analyst, { v: 1, taskId: task.id, kind: "plan" }, followUpJobId(task.id, "analyst", task.version + 1)));
  }
  return enqueue(jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind: "revise", round }, followUpJobId(task.id, "dev", task.version + 1)));
}

/** A dev `continue` in the round the task stopped in: it resumes that round's session (P4). */
export function continueJob(task: TaskSnapshot): TaskEffect {
  const round = Math.max(1, task.round);
  return enqueue(jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind: "continue", round }, followUpJobId(task.id, "dev", task.version + 1)));
}

/** The job that delivers a command where only intake can: open the PR, post the plan (G3). */
export function publishJob(task: TaskSnapshot): TaskEffect {
  return enqueue(jobRequest(QUEUE.intake, { v: 1, kind: "publish", taskId: task.id }, followUpJobId(task.id, "publish", task.version + 1)));
}

/**
 * After a command leaves the pipeline (or its line), the next queued command of the same issue/PR
 * may start (G4); `joins`: the task itself joins the line, so only it and those behind it move.
 */
export function dispatchNext(task: TaskSnapshot, joins = false): TaskEffect {
  const targetKey = task.command?.targetKey ?? "";
  const data = { v: 1 as const, kind: "dispatch-next" as const, targetKey, ...(joins ? { joined: task.id } : {}) };
  return enqueue(jobRequest(QUEUE.intake, data, followUpJobId(task.id, "dispatch", task.version + 1)));
}
