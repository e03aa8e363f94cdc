import type { BudgetStep } from "../budget.ts";
import type { ReviewFinding } from "../review-verdict.ts";

/** What one analysis consumed: turns it saw, and whether it was a forced draft (`/skip`). */
export interface AnalysisOutcome {
  consumedTurns: number;
  forced: boolean;
}

/** What went wrong with an analysis, in words the person can act on (see the notifier's texts). */
export type AnalystProblem =
  | "no-verdict"
  | "invalid-json"
  | "no-phase"
  | "unknown-phase"
  | "invalid-fields"
  | "timeout"
  /** The agent server (opencode) could not be reached. */
  | "unavailable"
  /** The model provider refused the request (credentials, a request it will always refuse). */
  | "provider-refused"
  /** The agent server is too old or misconfigured: an operator must act. */
  | "server-misconfigured"
  /** The process running the analysis died (killed, crashed) again and again. */
  | "worker-died"
  /** Something on our side broke (the database, the repository host): not the person's message. */
  | "internal";

/**
 * Problems of the machinery, not of the answer: the person's message was never judged, so the
 * pending work is analysed again without waiting for them (a bounded number of times in a row).
 */
export const MACHINE_PROBLEMS: ReadonlySet<AnalystProblem> = new Set<AnalystProblem>([
  "unavailable",
  "worker-died",
  "internal",
]);

/** Analyses that may fail in a row on the machinery before the task waits for the person again. */
export const MAX_ANALYSES_FAILED_IN_A_ROW = 3;

/** Everything that can happen to a task. Each service reports what it observed as one of these. */
export type TelegramEvent =
  /** The person sent free text (a dialogue turn, or an edit of a ready draft). */
  | { type: "turn.received" }
  /** The analyst asked questions; the draft is not complete yet. */
  | ({ type: "analyst.asked"; questions: string[] } & AnalysisOutcome)
  /**
   * The draft names repositories the git host does not have: the draft keeps its other fields
   * and the person is asked about those repositories (counts as a question turn).
   */
  | ({ type: "analyst.repos-missing"; missing: string[] } & AnalysisOutcome)
  /** The analyst completed the draft (phase propose or ready) and the repositories exist. */
  | ({ type: "analyst.drafted" } & AnalysisOutcome)
  /**
   * The analysis could not produce a usable verdict (after the client's repair prompt and the
   * job's retries). Releases the analysis; unanalysed turns stay pending for the next one.
   */
  | {
      type: "analyst.failed";
      problem: AnalystProblem;
      /**
       * How many analyses have now failed in a row, this one included (absent: 1). Below
       * {@link MAX_ANALYSES_FAILED_IN_A_ROW} a machine problem re-analyses the pending work at once.
       */
      failedInARow?: number;
    }
  /** The analyst decided this is not a coding request. */
  | { type: "analyst.aborted"; reason: string }
  /** `/skip`: stop asking, make a draft from what is known. */
  | { type: "user.skipped" }
  /** Approval by button or approval word. */
  | { type: "user.approved" }
  | { type: "user.cancelled" }
  | { type: "user.retried" }
  | { type: "dev.started" }
  /**
   * The dev agent finished a round and its work is committed and pushed. `commit`: the pushed
   * head (`abc1234`, or `owner/a@abc1234, owner/b@def5678` with several repositories).
   * `overBudget`: the round's spend passed the task's budget, so the review waits for the person
   * (paused, Continue runs it) and no one is told of a review that is not running.
   */
  | { type: "dev.finished"; commit: string; overBudget?: { spentUsd: number; budgetUsd: number } }
  /** The review passed: the task branch and its pushed head (short shas, one per repository). */
  | { type: "review.passed"; branch: string; commit: string }
  /**
   * The review asked for changes. The findings are stored with the event (`task_events`), so
   * the next dev round reads them from there; the person is told how many there are.
   */
  | { type: "review.rejected"; findings: ReviewFinding[] }
  | { type: "run.failed"; reason: string }
  | PipelineEvent;

/**
 * Events of the pipeline phase that mean the same on every door: the budget pause (P5) and the
 * timeout that keeps the work for a continue (P4).
 */
export type PipelineEvent =
  | BudgetEvent
  /** A dev run hit its idle or hard timeout; what it did is pushed and its session is kept. */
  | { type: "run.timed_out" }
  /**
   * The person asked to go on: Telegram's `/continue N` (a timed-out or failed task), a Gitea
   * `/agent continue` (a timed-out command). The dev agent resumes the saved session.
   */
  | { type: "user.continued" };

/**
 * The per-task budget (P5, see `checkBudget`): a service found the spend past the budget before
 * the next run; the person answered Continue (+budget) or Stop.
 */
export type BudgetEvent =
  | { type: "budget.exceeded"; spentUsd: number; budgetUsd: number; step: BudgetStep }
  /** `budgetUsd` is the task's new budget (ingress computes it with `extendedBudgetUsd`). */
  | { type: "user.budget-extended"; budgetUsd: number }
  | { type: "user.budget-stopped" };

export type GiteaEvent =
  /** `budgetUsd`: what the command may spend on agent runs (P5); absent or null: no budget. */
  | { type: "command.authorized"; budgetUsd?: number | null }
  | { type: "command.rejected"; reason: string }
  | { type: "command.started" }
  | { type: "command.succeeded" }
  | { type: "command.failed"; reason: string }
  | { type: "command.cancelled" }
  /** A control command (`status`, `cancel`) was carried out at once: it never queues. */
  | { type: "command.answered" }
  /** A restart found the command running: it is failed, never replayed (G6). */
  | { type: "command.interrupted" }
  /**
   * A dev round of a command committed and pushed its work (`commit`: pushed head, short sha);
   * the reviewer reviews it next. `summary`/`testsRun`: the dev agent's closing report.
   */
  | { type: "command.dev-finished"; commit: string; summary: string; testsRun?: string }
  /** The planner wrote (or revised) the plan of an issue; the reviewer reviews it next. */
  | { type: "command.plan-drafted"; plan: string }
  /** The planner answered `/agent discuss` about the current plan; it is posted next. */
  | { type: "command.answer-drafted"; answer: string }
  /** The reviewer asked for changes: the next dev round gets these findings, or the rounds are spent. */
  | { type: "command.review-rejected"; findings: ReviewFinding[] }
  /** The review passed; `minor`: findings that did not block it (shown in the PR). Publishing comes next. */
  | { type: "command.review-passed"; minor: ReviewFinding[] };

export type TaskEvent = TelegramEvent | GiteaEvent;
export type TaskEventType = TaskEvent["type"];
