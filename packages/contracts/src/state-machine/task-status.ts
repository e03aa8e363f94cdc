/**
 * One lifecycle with a front phase per door and one pipeline phase for all of them.
 *
 * The pipeline phase is where the work happens, the same on every door: `running` (its stage and
 * round live on the task and its traces), `paused` by the budget (P5), and the endings `success`,
 * `failed`, `timeout` (P4: the work is kept for a continue) and `cancelled`.
 */
export const PIPELINE_STATUSES = ["running", "paused", "success", "failed", "timeout", "cancelled"] as const;

/** A Telegram task's front phase: the dialogue up to approval, or its end without one. */
export const TELEGRAM_FRONT_STATUSES = ["draft", "collecting", "ready", "approved", "aborted"] as const;

/**
 * A Gitea `/agent` command's front phase: received, then queued in its issue/PR's line once
 * authorized, or rejected (not authorized, or refused when its turn came).
 */
export const GITEA_FRONT_STATUSES = ["received", "queued", "rejected"] as const;

export const TELEGRAM_STATUSES = [...TELEGRAM_FRONT_STATUSES, ...PIPELINE_STATUSES] as const;
export const GITEA_STATUSES = [...GITEA_FRONT_STATUSES, ...PIPELINE_STATUSES] as const;

export type PipelineStatus = (typeof PIPELINE_STATUSES)[number];
export type TelegramStatus = (typeof TELEGRAM_STATUSES)[number];
export type GiteaStatus = (typeof GITEA_STATUSES)[number];
export type TaskStatus = TelegramStatus | GiteaStatus;
export type TaskSource = "telegram" | "gitea";

export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>([
  "success",
  "failed",
  "timeout",
  "cancelled",
  "aborted",
  "rejected",
]);

export function isFinal(status: TaskStatus): boolean {
  return FINAL_STATUSES.has(status);
}

/**
 * A status as stored by any release: a Gitea command that ended well was `succeeded` before the
 * lifecycles became one (migration `one_lifecycle` moves the rows); a row written since by an
 * older process during a rolling upgrade still reads as `success`.
 */
export function storedStatus(status: string): TaskStatus {
  return (status === "succeeded" ? "success" : status) as TaskStatus;
}
