import { jobRequest, type AnyJobRequest } from "../jobs/job-catalog.ts";
import { followUpJobId } from "../jobs/job-id.ts";
import { QUEUE } from "../queues.ts";
import { continueJob, dispatchNext, isPlanning } from "./pipeline-jobs.ts";
import type { TaskEffect } from "./task-effects.ts";
import type { GiteaFrontEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import type { GiteaStatus } from "./task-status.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

function ok(
  task: TaskSnapshot,
  status: GiteaStatus,
  effects: TaskEffect[],
  patch: Partial<Pick<TaskSnapshot, "round" | "budgetUsd">> = {},
): TransitionResult {
  return { ok: true, task: { ...task, ...patch, status, version: task.version + 1 }, effects };
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
 * A command leaving `received` that others may be waiting for: a work command ahead of them in
 * its line (turned away at authorization), or a `/agent cancel` that holds back the start of the
 * commands before it (it may be meant for them). The line is looked at again.
 */
function releasesLine(task: TaskSnapshot): TaskEffect[] {
  if (!task.command) return [];
  return task.command.kind === "cancel" || !isControl(task) ? [dispatchNext(task)] : [];
}

/**
 * The Gitea door's front phase: a command is received, authorized into its issue/PR's line (or
 * rejected), and started when its turn comes; from `running` on, the pipeline takes it.
 */
export function giteaTransition(task: TaskSnapshot, event: GiteaFrontEvent): TransitionResult {
  const status = task.status as GiteaStatus;
  switch (event.type) {
    case "command.authorized":
      if (status !== "received" || isControl(task)) return refuse(task, event.type, "illegal");
      return ok(task, "queued", [dispatchNext(task, true)], { budgetUsd: event.budgetUsd ?? null });
    case "command.answered":
      if (status !== "received" || !isControl(task)) return refuse(task, event.type, "illegal");
      return ok(task, "success", releasesLine(task));
    case "command.rejected":
      // From `queued`: a command refused when its turn came (e.g. an agent PR opened meanwhile).
      if (status === "queued") return ok(task, "rejected", [dispatchNext(task)]);
      if (status !== "received") return refuse(task, event.type, "illegal");
      return ok(task, "rejected", releasesLine(task));
    case "command.started":
      if (status !== "queued") return refuse(task, event.type, "illegal");
      // A continued timeout (it has a round) resumes its dev session in the round it stopped in (P4).
      if (task.round > 0 && !isPlanning(task.command)) return ok(task, "running", [continueJob(task)]);
      return ok(task, "running", [{ type: "enqueue", job: firstJob({ ...task, round: 1 }) }], { round: 1 });
  }
}
