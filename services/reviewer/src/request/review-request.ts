import type { Task } from "@ratatoskr/db";
import { visibleText } from "@ratatoskr/gitea";
import { iteratedCommandOf, taskBranch } from "@ratatoskr/pipeline";
import { buildPlanReviewPrompt } from "../prompt/plan-review-prompt.ts";
import { buildReviewPrompt } from "../prompt/review-prompt.ts";

/**
 * What a review reads from the task's request, whichever door it came through: an approved
 * Telegram draft, or a Gitea command with its issue or PR. The review itself is the same.
 */
export interface ReviewRequest {
  /** The task whose working trees are reviewed (a PR iterate: the implement command's). */
  workTaskId: number;
  /** An earlier task whose review session a first review goes on in (a PR iterate's implement command). */
  sessionTaskId?: number;
  repos: readonly string[];
  branch: string;
  diffPrompt(input: { round: number; diff: string; maxDiffChars: number }): string;
  planPrompt(input: { round: number; plan: string }): string;
}

function draftRequest(task: Task): ReviewRequest {
  return {
    workTaskId: task.id,
    repos: task.repos,
    branch: taskBranch(task),
    diffPrompt: ({ round, diff, maxDiffChars }) =>
      buildReviewPrompt({ taskId: task.id, round, title: task.title, goal: task.goal, acceptanceCriteria: task.acceptanceCriteria, diff, maxDiffChars }),
    planPrompt: () => {
      throw new Error(`task ${task.id} is a Telegram task: it has no plan to review`);
    },
  };
}

function commandRequest(task: Task): ReviewRequest {
  const origin = iteratedCommandOf(task);
  const message = visibleText(task.commandMessage ?? "");
  const goal = [visibleText(task.goal ?? ""), message ? `Request from @${task.requesterLogin}: ${message}` : ""].filter(Boolean).join("\n\n");
  return {
    workTaskId: origin ?? task.id,
    ...(origin === undefined ? {} : { sessionTaskId: origin }),
    repos: task.repos.slice(0, 1),
    branch: task.branch ?? "",
    diffPrompt: ({ round, diff, maxDiffChars }) =>
      buildReviewPrompt({ taskId: task.id, round, title: task.title, goal, acceptanceCriteria: [], diff, maxDiffChars }),
    planPrompt: ({ round, plan }) => buildPlanReviewPrompt({ taskId: task.id, round, title: task.title, body: task.goal, plan }),
  };
}

/** The request a task carries: a Gitea command's when it has one, else its approved draft. */
export function reviewRequestOf(task: Task): ReviewRequest {
  return task.commandKind ? commandRequest(task) : draftRequest(task);
}
