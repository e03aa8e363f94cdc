import type { BudgetStep } from "../budget.ts";
import type { TaskSource, TaskStatus } from "./task-status.ts";

/**
 * `status`, `cancel` (G7), `continue` and `stop` (a budget pause, P5) are answered by intake at
 * once and never hold a place in the issue/PR's queue; the others run agents in order.
 */
export type GiteaCommandKind = "plan" | "discuss" | "iterate" | "implement" | "fix" | "status" | "cancel" | "continue" | "stop";

/** The part of a task the state machine needs. `packages/db` maps rows to and from it. */
export interface TaskSnapshot {
  id: number;
  source: TaskSource;
  status: TaskStatus;
  /** Incremented by every transition; makes follow-up job ids deterministic. */
  version: number;
  /** Analyst turns used so far (Telegram). */
  turnCount: number;
  /** Dialogue turns received and not yet seen by the analyst. */
  pendingTurns: number;
  /** True while an analyst job for this task is queued or running: one analysis at a time. */
  analysing: boolean;
  /** `/skip` arrived: the next analysis must produce a draft. */
  skipRequested: boolean;
  /** Current dev/review round, 0 before the first dev run. */
  round: number;
  maxTurns: number;
  maxRounds: number;
  /** USD the task may spend on agent runs; null or absent = no budget (P5). */
  budgetUsd?: number | null;
  /** While `paused` by the budget: the run that did not start and resumes on Continue. */
  pausedStep?: BudgetStep | null;
  /**
   * Why the task failed or timed out, in the words the person reads; set by the transition that
   * ends it (absent: the column is left as it is).
   */
  failureReason?: string | null;
  /** Gitea only. */
  command?: { kind: GiteaCommandKind; target: "issue" | "pr"; targetKey: string };
}
