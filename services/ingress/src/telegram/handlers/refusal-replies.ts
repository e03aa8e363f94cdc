import {
  IllegalTransitionError,
  isFinal,
  type IllegalTransition,
  type TaskEvent,
  type TelegramStatus,
} from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import type { BotDeps } from "./bot-deps.ts";
import { replyWithStatus } from "./chat-task.ts";
import { reply } from "./reply.ts";

export function refusalOf(err: unknown): IllegalTransition | null {
  return err instanceof IllegalTransitionError ? err.refusal : null;
}

const IN_THE_WORKS: ReadonlySet<string> = new Set<TelegramStatus>(["approved", "running"]);

/**
 * The reply to a refused transition. `refusal.from` is the status at the moment of refusal
 * (fresher than any row read before), so replies name what the task really is now.
 */
export async function replyToRefusal(
  deps: BotDeps,
  chatId: number,
  task: Task,
  refusal: IllegalTransition,
): Promise<void> {
  const to = { chatId, taskId: task.id };
  const status = refusal.from as TelegramStatus;
  deps.logger.info(
    { taskId: task.id, event: refusal.event, reason: refusal.reason, status },
    "transition refused",
  );
  switch (refusal.reason) {
    case "already-approved":
      return reply(deps, to, "task.already-approved", { taskId: task.id });
    case "turn-limit":
      return reply(deps, to, "task.turn-limit", { taskId: task.id, maxTurns: task.maxTurns });
    case "not-retryable":
      return reply(deps, to, "task.retry-refused", { taskId: task.id, status });
    case "nothing-to-cancel":
      return reply(deps, to, "bot.nothing-to-cancel", {});
    default:
      if (IN_THE_WORKS.has(status)) return reply(deps, to, "task.already-approved", { taskId: task.id });
      // A finished task cannot be resumed either; the retry text names its status and points to /start.
      if (refusal.reason === "not-continuable" && isFinal(status)) {
        return reply(deps, to, "task.retry-refused", { taskId: task.id, status });
      }
      // Anything else (/skip on a ready draft, /retry while the analyst works…): show where it stands.
      return replyWithStatus(deps, chatId, task.id);
  }
}

/** Applies `event`; a refusal becomes its reply and `false`. Other errors propagate. */
export async function applyOrExplain(
  deps: BotDeps,
  chatId: number,
  task: Task,
  event: TaskEvent,
): Promise<boolean> {
  try {
    await deps.transition(task.id, event);
    deps.logger.info({ taskId: task.id, event: event.type }, "transition applied");
    return true;
  } catch (err) {
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    await replyToRefusal(deps, chatId, task, refusal);
    return false;
  }
}
