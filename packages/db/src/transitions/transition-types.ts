import { IllegalTransitionError, type TaskEvent, type TaskStatus } from "@ratatoskr/contracts";
import type { FollowUp, Task } from "../../generated/client.ts";

/** Non-snapshot columns a caller may change in the same transaction as the status. */
export type TaskPatch = Partial<
  Pick<
    Task,
    | "title"
    | "goal"
    | "repos"
    | "why"
    | "acceptanceCriteria"
    | "branch"
    | "prUrl"
    | "agentSessionId"
    | "agentServerUrl"
    | "failureReason"
    | "statusCommentId"
    | "resultText"
    | "locale"
    | "finishedAt"
  >
>;

export interface AppliedTransition {
  task: Task;
  /** Outbox rows to hand to the follow-up dispatcher once this call has returned (committed). */
  followUps: FollowUp[];
}

export class TaskNotFoundError extends Error {
  override readonly name = "TaskNotFoundError";
  constructor(readonly taskId: number) {
    super(`task ${taskId} does not exist`);
  }
}

/** A conditional write's check: the row must still be at `expected` (when one is given). */
export function movedOnSince(row: Pick<Task, "version">, expected: number | undefined): boolean {
  return expected !== undefined && row.version !== expected;
}

/** Throws "moved-on" when the row is no longer at the version the caller judged it at. */
export function assertExpectedVersion(row: Pick<Task, "version" | "status">, event: TaskEvent, expected: number | undefined): void {
  if (movedOnSince(row, expected)) {
    throw new IllegalTransitionError({ reason: "moved-on", from: row.status as TaskStatus, event: event.type });
  }
}
