import { giteaTransition } from "./gitea-transitions.ts";
import { pipelineTransition } from "./pipeline-transitions.ts";
import type { GiteaFrontEvent, PipelineEvent, TaskEvent, TelegramFrontEvent } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import { telegramTransition } from "./telegram-transitions.ts";
import { refuse, type TransitionResult } from "./transition-result.ts";

const GITEA_FRONT: ReadonlySet<TaskEvent["type"]> = new Set<GiteaFrontEvent["type"]>([
  "command.authorized",
  "command.rejected",
  "command.started",
  "command.answered",
]);

const TELEGRAM_FRONT: ReadonlySet<TaskEvent["type"]> = new Set<TelegramFrontEvent["type"]>([
  "turn.received",
  "analyst.asked",
  "analyst.repos-missing",
  "analyst.drafted",
  "analyst.failed",
  "analyst.aborted",
  "user.skipped",
  "user.approved",
  "user.retried",
  "dev.started",
]);

function isGiteaFront(event: TaskEvent): event is GiteaFrontEvent {
  return GITEA_FRONT.has(event.type);
}

function isTelegramFront(event: TaskEvent): event is TelegramFrontEvent {
  return TELEGRAM_FRONT.has(event.type);
}

/**
 * The one reducer every service uses: `(task, event) → {task, effects}` or a refusal. Each door
 * has its front phase; the pipeline phase is one for all. Pure: no clock, no I/O. An illegal
 * transition is a refusal, never a silent overwrite.
 */
export function reduceTask(task: TaskSnapshot, event: TaskEvent): TransitionResult {
  if (isGiteaFront(event)) return task.source === "gitea" ? giteaTransition(task, event) : refuse(task, event.type, "wrong-source");
  if (isTelegramFront(event)) return task.source === "telegram" ? telegramTransition(task, event) : refuse(task, event.type, "wrong-source");
  return pipelineTransition(task, event as PipelineEvent);
}
