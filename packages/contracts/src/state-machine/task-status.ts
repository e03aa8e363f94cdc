/** Lifecycle of a task that started as a Telegram dialogue. */
export const TELEGRAM_STATUSES = [
  "draft",
  "collecting",
  "ready",
  "approved",
  "running",
  /** Stopped before the next agent run because the task's spend passed its budget (P5). */
  "paused",
  "success",
  "failed",
  "timeout",
  "cancelled",
  "aborted",
] as const;

/**
 * Lifecycle of a Gitea `/agent` command. `cancelled` is not in the original design card;
 * `/agent cancel` (G7) needs a final state that is neither a failure nor a rejection. `paused`
 * is the pipeline's budget pause (P5), the same as a Telegram task's: it keeps its place at the
 * head of its issue/PR's line until `/agent continue` or `/agent stop`. `timeout` is the pipeline's
 * too (P4): final, its line moves on, and `/agent continue` queues it again to resume its session.
 */
export const GITEA_STATUSES = [
  "received",
  "queued",
  "running",
  "paused",
  "succeeded",
  "failed",
  "timeout",
  "rejected",
  "cancelled",
] as const;

export type TelegramStatus = (typeof TELEGRAM_STATUSES)[number];
export type GiteaStatus = (typeof GITEA_STATUSES)[number];
export type TaskStatus = TelegramStatus | GiteaStatus;
export type TaskSource = "telegram" | "gitea";

export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set([
  "success",
  "failed",
  "timeout",
  "cancelled",
  "aborted",
  "succeeded",
  "rejected",
]);

export function isFinal(status: TaskStatus): boolean {
  return FINAL_STATUSES.has(status);
}
