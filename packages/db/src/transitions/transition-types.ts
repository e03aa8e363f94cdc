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
