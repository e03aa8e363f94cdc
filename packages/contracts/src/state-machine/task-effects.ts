import type { AnyJobRequest } from "../jobs/job-catalog.ts";

/**
 * What a transition asks the world to do. The reducer only describes effects; `packages/db`
 * stores them in the same transaction as the new state and dispatches them after commit.
 */
export type TaskEffect =
  | { type: "enqueue"; job: AnyJobRequest }
  /** A message to the task's owner, rendered by the notifier in the configured locale. */
  | { type: "notify"; template: NotifyTemplate; params: Record<string, string | number> };

export type NotifyTemplate =
  | "task.questions"
  | "task.draft-ready"
  | "task.aborted"
  | "task.analyst-error"
  | "task.repo-not-found"
  | "task.approved"
  | "task.cancelled"
  | "task.retried"
  | "task.continued"
  | "task.running"
  | "task.dev-to-review"
  | "task.review-to-dev"
  | "task.success"
  | "task.failed"
  | "task.timeout"
  | "task.budget-exceeded"
  | "task.budget-extended"
  | "command.status";
