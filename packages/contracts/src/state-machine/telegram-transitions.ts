import { jobRequest, type AnyJobRequest } from "../jobs/job-catalog.ts";
import { followUpJobId } from "../jobs/job-id.ts";
import { QUEUE } from "../queues.ts";
import type { TaskEffect } from "./task-effects.ts";
import { MACHINE_PROBLEMS, MAX_ANALYSES_FAILED_IN_A_ROW, type AnalysisOutcome, type TelegramFrontEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import type { TelegramStatus } from "./task-status.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

const DIALOGUE: ReadonlySet<string> = new Set<TelegramStatus>(["draft", "collecting", "ready"]);

type Step = Omit<TaskSnapshot, "id" | "source" | "version">;

function ok(task: TaskSnapshot, next: Partial<Step>, effects: TaskEffect[] = []): TransitionResult {
  return { ok: true, task: { ...task, ...next, version: task.version + 1 }, effects };
}

function enqueue(job: AnyJobRequest): TaskEffect {
  return { type: "enqueue", job };
}

function analystJob(task: TaskSnapshot, forced: boolean): TaskEffect {
  const kind = forced ? "force-draft" : "turn";
  return enqueue(jobRequest(QUEUE.analyst, { v: 1, taskId: task.id, kind }, followUpJobId(task.id, "analyst", task.version + 1)));
}

function devJob(task: TaskSnapshot, kind: "implement", round: number): TaskEffect {
  return enqueue(jobRequest(QUEUE.dev, { v: 1, taskId: task.id, kind, round }, followUpJobId(task.id, "dev", task.version + 1)));
}

function notify(template: Extract<TaskEffect, { type: "notify" }>["template"], params: Record<string, string | number> = {}): TaskEffect {
  return { type: "notify", template, params };
}

/**
 * Starts an analysis unless one is already in flight; an in-flight analysis picks the new
 * turns up when it reports back (see `afterAnalysis`), so a chat never has two at once.
 */
function requestAnalysis(task: TaskSnapshot, next: Partial<Step>): TransitionResult {
  const merged = { ...task, ...next };
  if (task.analysing) return ok(task, next);
  return ok(task, { ...next, analysing: true }, [analystJob(task, merged.skipRequested)]);
}

/** Settles an analysis: turns that arrived meanwhile start the next one instead of a reply. */
function afterAnalysis(
  task: TaskSnapshot,
  outcome: AnalysisOutcome,
  settled: Partial<Step>,
  effects: TaskEffect[],
): TransitionResult {
  const pendingTurns = Math.max(0, task.pendingTurns - outcome.consumedTurns);
  const skipRequested = task.skipRequested && !outcome.forced;
  if (pendingTurns > 0 || skipRequested) {
    const next = { pendingTurns, skipRequested, status: "collecting" as const, analysing: true };
    return ok(task, next, [analystJob(task, skipRequested)]);
  }
  return ok(task, { ...settled, pendingTurns, skipRequested, analysing: false }, effects);
}

/** The Telegram door's front phase: the dialogue up to approval (the pipeline takes it from there). */
export function telegramTransition(task: TaskSnapshot, event: TelegramFrontEvent): TransitionResult {
  const status = task.status as TelegramStatus;
  switch (event.type) {
    case "turn.received":
      if (status === "approved" || status === "running") return refuse(task, event.type, "already-approved");
      if (!DIALOGUE.has(status)) return refuse(task, event.type, "finished");
      if (task.turnCount >= task.maxTurns && status !== "ready") return refuse(task, event.type, "turn-limit");
      return requestAnalysis(task, { status: "collecting", pendingTurns: task.pendingTurns + 1 });

    case "user.skipped":
      if (status !== "draft" && status !== "collecting") return refuse(task, event.type, "illegal");
      return requestAnalysis(task, { status: "collecting", skipRequested: true });

    case "analyst.asked":
      if (status !== "collecting" || !task.analysing) return refuse(task, event.type, "illegal");
      return afterAnalysis(task, event, { turnCount: task.turnCount + 1 }, [
        notify("task.questions", { taskId: task.id, questions: event.questions.join("\n") }),
      ]);

    case "analyst.repos-missing":
      if (status !== "collecting" || !task.analysing) return refuse(task, event.type, "illegal");
      return afterAnalysis(task, event, { turnCount: task.turnCount + 1 }, [
        notify("task.repo-not-found", { taskId: task.id, missing: event.missing.join("\n") }),
      ]);

    case "analyst.drafted":
      if (status !== "collecting" || !task.analysing) return refuse(task, event.type, "illegal");
      return afterAnalysis(
        task,
        event,
        { status: "ready", turnCount: task.turnCount + 1 },
        [notify("task.draft-ready", { taskId: task.id })],
      );

    case "analyst.failed": {
      if (status !== "collecting" || !task.analysing) return refuse(task, event.type, "illegal");
      // Nothing was wrong with what the person wrote: their pending work goes on without them.
      const pendingWork = task.pendingTurns > 0 || task.skipRequested;
      const again = pendingWork && MACHINE_PROBLEMS.has(event.problem) && (event.failedInARow ?? 1) < MAX_ANALYSES_FAILED_IN_A_ROW;
      const told = notify("task.analyst-error", { taskId: task.id, problem: event.problem, then: again ? "retrying" : "waiting" });
      if (again) return ok(task, {}, [analystJob(task, task.skipRequested), told]);
      return ok(task, { analysing: false, skipRequested: false }, [told]);
    }

    case "analyst.aborted":
      if (status !== "collecting" || !task.analysing) return refuse(task, event.type, "illegal");
      return ok(task, { status: "aborted", analysing: false, pendingTurns: 0 }, [
        notify("task.aborted", { taskId: task.id, reason: event.reason }),
      ]);

    case "user.approved":
      if (status === "approved" || status === "running") return refuse(task, event.type, "already-approved");
      if (status !== "ready") return refuse(task, event.type, "not-ready");
      return ok(task, { status: "approved", round: 1 }, [
        devJob(task, "implement", 1),
        notify("task.approved", { taskId: task.id }),
      ]);

    case "user.retried":
      if (status === "collecting" || status === "ready") {
        const retried = ok(task, { status: "collecting", turnCount: 0, analysing: true }, [
          analystJob(task, false),
          notify("task.retried", { taskId: task.id }),
        ]);
        return task.analysing ? refuse(task, event.type, "illegal") : retried;
      }
      if (status === "failed" || status === "timeout") {
        return ok(task, { status: "approved", round: 1 }, [
          devJob(task, "implement", 1),
          notify("task.retried", { taskId: task.id }),
        ]);
      }
      return refuse(task, event.type, "not-retryable");

    case "dev.started":
      if (status === "running") return ok(task, {});
      if (status !== "approved") return refuse(task, event.type, "not-approved");
      return ok(task, { status: "running" }, [notify("task.running", { taskId: task.id, round: task.round })]);
  }
}
