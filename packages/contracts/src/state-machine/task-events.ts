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

/** The Telegram door's front phase: the dialogue, its approval, and a task started again. */
export type TelegramFrontEvent =
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
  /** `/retry`: the dialogue analysed again, or a failed or timed-out task implemented afresh. */
  | { type: "user.retried" }
  /** The first dev round of an approved task began: the task enters the pipeline phase. */
  | { type: "dev.started" };

/** The Gitea door's front phase: a command's receipt, authorization and place in its issue/PR's line. */
export type GiteaFrontEvent =
  /** `budgetUsd`: what the command may spend on agent runs (P5); absent or null: no budget. */
  | { type: "command.authorized"; budgetUsd?: number | null }
  | { type: "command.rejected"; reason: string }
  /** Its turn in the line came: the command enters the pipeline phase. */
  | { type: "command.started" }
  /** A control command (`status`, `cancel`, …) was carried out at once: it never queues. */
  | { type: "command.answered" };

/**
 * The pipeline phase's events: the same on every door. What differs by door is data on the task
 * (a Gitea command's kind and target), never the event: each step reports these whoever asked.
 */
export type PipelineEvent =
  /**
   * The dev agent finished a round and its work is committed and pushed. `commit`: the pushed
   * head (`abc1234`, or `owner/a@abc1234, owner/b@def5678` with several repositories);
   * `summary`/`testsRun`: the agent's closing report. `overBudget`: the round's spend passed the
   * task's budget, so the review waits for the person (paused, Continue runs it) and no one is
   * told of a review that is not running.
   */
  | {
      type: "dev.finished";
      commit: string;
      summary?: string;
      testsRun?: string;
      overBudget?: { spentUsd: number; budgetUsd: number };
    }
  /** The planner wrote (or revised) a plan (a Gitea issue's `/agent plan`); it is reviewed next. */
  | { type: "plan.drafted"; plan: string }
  /** The planner answered a question about the plan (`/agent discuss`); it is delivered next. */
  | { type: "answer.drafted"; answer: string }
  /**
   * The review passed. `branch`/`commit`: the reviewed branch and head (short shas, one per
   * repository; absent for a plan); `minor`: findings that did not block it.
   */
  | { type: "review.passed"; branch?: string; commit?: string; minor?: ReviewFinding[] }
  /**
   * The review asked for changes. The findings are stored with the event (`task_events`), so
   * the next round reads them from there; the person is told how many there are.
   */
  | { type: "review.rejected"; findings: ReviewFinding[] }
  /** The work is delivered where the door delivers it (a PR opened or updated, a plan posted, a fix pushed). */
  | { type: "run.succeeded" }
  /**
   * `reason`: what the person reads, stored on the task. `cause`: a failure whose cause is known
   * for certain (the postmortem then explains it plainly, without a model run).
   */
  | { type: "run.failed"; reason: string; cause?: KnownFailureCause }
  /** A run hit its idle or hard timeout; what it did is pushed and its session is kept. */
  | { type: "run.timed_out"; reason?: string }
  | { type: "user.cancelled" }
  /**
   * The person asked to go on: Telegram's `/continue N` (a timed-out or failed task), a Gitea
   * `/agent continue` (a timed-out command). The dev agent resumes the saved session.
   */
  | { type: "user.continued" }
  | BudgetEvent;

/** Failures whose cause the service knows for certain, and what the person can do about each. */
export const KNOWN_FAILURE_CAUSES = ["repo-not-found", "auth-refused", "push-rejected", "refs-moved"] as const;
export type KnownFailureCause = (typeof KNOWN_FAILURE_CAUSES)[number];

/**
 * The per-task budget (P5, see `checkBudget`): a service found the spend past the budget; the
 * person answered Continue (+budget) or Stop.
 */
export type BudgetEvent =
  | { type: "budget.exceeded"; spentUsd: number; budgetUsd: number; step: BudgetStep }
  /** `budgetUsd` is the task's new budget (ingress computes it with `extendedBudgetUsd`). */
  | { type: "user.budget-extended"; budgetUsd: number }
  | { type: "user.budget-stopped" };

/** Everything a Telegram task can take: its front phase and the pipeline. */
export type TelegramEvent = TelegramFrontEvent | PipelineEvent;
/** Everything a Gitea command can take: its front phase and the pipeline. */
export type GiteaEvent = GiteaFrontEvent | PipelineEvent;

export type TaskEvent = TelegramFrontEvent | GiteaFrontEvent | PipelineEvent;
export type TaskEventType = TaskEvent["type"];

/**
 * Event names of the releases before the lifecycles became one, as still found in `task_events`
 * rows written by an older process during a rolling upgrade (migration `one_lifecycle` renames
 * the rows it finds).
 */
export const LEGACY_EVENT_TYPES: Readonly<Record<string, TaskEventType>> = {
  "command.dev-finished": "dev.finished",
  "command.plan-drafted": "plan.drafted",
  "command.answer-drafted": "answer.drafted",
  "command.review-passed": "review.passed",
  "command.review-rejected": "review.rejected",
  "command.succeeded": "run.succeeded",
  "command.failed": "run.failed",
  "command.interrupted": "run.failed",
  "command.cancelled": "user.cancelled",
};
