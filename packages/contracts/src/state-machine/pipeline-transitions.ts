import { formatFinding, isBlockingFinding } from "../review-verdict.ts";
import { budgetTransition } from "./budget-transitions.ts";
import { continueJob, deliversByPublishing, dispatchNext, holdsLine, isPullIterate, publishJob, reviewJob, reviseJob } from "./pipeline-jobs.ts";
import { postmortemJob } from "./postmortem-job.ts";
import type { TaskEffect } from "./task-effects.ts";
import type { PipelineEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import { isFinal, type TaskStatus } from "./task-status.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

type Notify = Extract<TaskEffect, { type: "notify" }>;

function notify(template: Notify["template"], params: Notify["params"]): TaskEffect {
  return { type: "notify", template, params };
}

function ok(task: TaskSnapshot, next: Partial<TaskSnapshot>, effects: TaskEffect[]): TransitionResult {
  return { ok: true, task: { ...task, ...next, version: task.version + 1 }, effects };
}

/** A task leaving the pipeline for good (or for a while): a command frees its issue/PR's line. */
function leave(task: TaskSnapshot, status: TaskStatus, effects: TaskEffect[], next: Partial<TaskSnapshot> = {}): TransitionResult {
  return ok(task, { ...next, status }, [...effects, ...(holdsLine(task) ? [dispatchNext(task)] : [])]);
}

/** Failed, saying why: the reason is stored on the task (the status comment, `/status`) and told. */
function failed(task: TaskSnapshot, reason: string, findings?: string[]): TransitionResult {
  const stored = findings?.length ? `${reason}:\n${findings.map((f) => `- ${f}`).join("\n")}` : reason;
  const told = notify("task.failed", { taskId: task.id, reason, ...(findings ? { findings: findings.join("\n") } : {}) });
  return leave(task, "failed", [postmortemJob(task, "failed"), told], { failureReason: stored });
}

/** A dialogue task is cancelled at any time before its end; a command only once it holds a place in its line. */
function cancellable(task: TaskSnapshot): boolean {
  if (holdsLine(task)) return task.status === "queued" || task.status === "running" || task.status === "paused";
  return !isFinal(task.status);
}

/**
 * The pipeline phase, one state machine for every door: a step's report moves the task to the
 * next step or to its end. What differs by door is read from the task's data (`holdsLine`,
 * `deliversByPublishing`, the command's kind), never from which door it came through.
 */
export function pipelineTransition(task: TaskSnapshot, event: PipelineEvent): TransitionResult {
  const { status } = task;
  switch (event.type) {
    case "budget.exceeded":
    case "user.budget-extended":
      return budgetTransition(task, event);
    case "user.budget-stopped": {
      const result = budgetTransition(task, event);
      if (!result.ok || !holdsLine(task)) return result;
      return { ...result, effects: [...result.effects, dispatchNext(task)] };
    }

    case "dev.finished":
      if (status !== "running") return refuse(task, event.type, "illegal");
      if (event.overBudget) return budgetTransition(task, { type: "budget.exceeded", ...event.overBudget, step: "review" });
      return ok(task, {}, [reviewJob(task), notify("task.dev-to-review", { taskId: task.id, round: task.round })]);

    case "plan.drafted":
      if (status !== "running") return refuse(task, event.type, "illegal");
      return ok(task, {}, [reviewJob(task)]);

    case "answer.drafted":
      if (status !== "running") return refuse(task, event.type, "illegal");
      return ok(task, {}, [publishJob(task)]);

    case "review.passed":
      if (status !== "running") return refuse(task, event.type, "illegal");
      // Where the door delivers by publishing (a PR, a plan comment), the task ends once that is done.
      if (deliversByPublishing(task)) return ok(task, {}, [publishJob(task)]);
      return leave(task, "success", [
        notify("task.success", { taskId: task.id, round: task.round, branch: event.branch ?? "", commit: event.commit ?? "" }),
      ]);

    case "review.rejected": {
      if (status !== "running") return refuse(task, event.type, "illegal");
      const remaining = event.findings.filter(isBlockingFinding);
      if (task.round >= task.maxRounds || isPullIterate(task)) {
        const reason = `review still failing after ${task.round} round${task.round === 1 ? "" : "s"} (${remaining.length} findings)`;
        return failed(task, reason, remaining.map(formatFinding));
      }
      return ok(task, { round: task.round + 1 }, [
        reviseJob(task, task.round + 1),
        notify("task.review-to-dev", { taskId: task.id, round: task.round, findings: remaining.length }),
      ]);
    }

    case "run.succeeded":
      if (status !== "running") return refuse(task, event.type, "illegal");
      return leave(task, "success", [notify("task.success", { taskId: task.id, round: task.round, branch: "", commit: "" })]);

    case "run.failed":
      if (status !== "approved" && status !== "running") return refuse(task, event.type, "illegal");
      return failed(task, event.reason);

    case "run.timed_out":
      if (status !== "running") return refuse(task, event.type, "illegal");
      return leave(task, "timeout", [postmortemJob(task, "timeout"), notify("task.timeout", { taskId: task.id })], {
        ...(event.reason ? { failureReason: event.reason } : {}),
      });

    case "user.cancelled":
      if (!cancellable(task)) return refuse(task, event.type, "nothing-to-cancel");
      return leave(task, "cancelled", [notify("task.cancelled", { taskId: task.id })], {
        analysing: false,
        pendingTurns: 0,
        pausedStep: null,
      });

    case "user.continued":
      // A command goes back into its issue/PR's line and resumes in the round it stopped in when its turn comes.
      if (holdsLine(task)) {
        if (status !== "timeout") return refuse(task, event.type, "not-continuable");
        return ok(task, { status: "queued" }, [dispatchNext(task, true)]);
      }
      if (status !== "failed" && status !== "timeout") return refuse(task, event.type, "not-continuable");
      return ok(task, { status: "approved" }, [
        continueJob(task),
        notify("task.continued", { taskId: task.id }),
      ]);
  }
}
