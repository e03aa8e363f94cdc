import type { BudgetEvent, GiteaEvent, TaskEvent, TelegramEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import { giteaTransition } from "./gitea-transitions.ts";
import { telegramTransition } from "./telegram-transitions.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

function isGiteaEvent(event: TaskEvent): event is GiteaEvent {
  return event.type.startsWith("command.");
}

/** The pipeline's budget events (P5) mean the same on every door. */
function isBudgetEvent(event: TaskEvent): event is BudgetEvent {
  return event.type === "budget.exceeded" || event.type === "user.budget-extended" || event.type === "user.budget-stopped";
}

/**
 * The one reducer every service uses: `(task, event) → {task, effects}` or a refusal.
 * Pure: no clock, no I/O. An illegal transition is a refusal, never a silent overwrite.
 */
export function reduceTask(task: TaskSnapshot, event: TaskEvent): TransitionResult {
  if (task.source === "gitea") {
    return isGiteaEvent(event) || isBudgetEvent(event) ? giteaTransition(task, event) : refuse(task, event.type, "wrong-source");
  }
  return isGiteaEvent(event) ? refuse(task, event.type, "wrong-source") : telegramTransition(task, event as TelegramEvent);
}
