import type { GiteaEvent, PipelineEvent, TaskEvent, TelegramEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import { giteaTransition } from "./gitea-transitions.ts";
import { telegramTransition } from "./telegram-transitions.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

function isGiteaEvent(event: TaskEvent): event is GiteaEvent {
  return event.type.startsWith("command.");
}

const PIPELINE_EVENTS: ReadonlySet<TaskEvent["type"]> = new Set<PipelineEvent["type"]>([
  "budget.exceeded",
  "user.budget-extended",
  "user.budget-stopped",
  "run.timed_out",
  "user.continued",
]);

/** The pipeline's events (budget pause, timeout, continue) mean the same on every door. */
function isPipelineEvent(event: TaskEvent): event is PipelineEvent {
  return PIPELINE_EVENTS.has(event.type);
}

/**
 * The one reducer every service uses: `(task, event) → {task, effects}` or a refusal.
 * Pure: no clock, no I/O. An illegal transition is a refusal, never a silent overwrite.
 */
export function reduceTask(task: TaskSnapshot, event: TaskEvent): TransitionResult {
  if (task.source === "gitea") {
    return isGiteaEvent(event) || isPipelineEvent(event) ? giteaTransition(task, event) : refuse(task, event.type, "wrong-source");
  }
  return isGiteaEvent(event) ? refuse(task, event.type, "wrong-source") : telegramTransition(task, event as TelegramEvent);
}
