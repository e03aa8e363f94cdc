import type { ReviewFinding } from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import { commitMessage, roundTrailer } from "@ratatoskr/git";
import { iteratedCommandOf, taskBranch } from "@ratatoskr/pipeline";
import { buildDevPrompt } from "../prompt/dev-prompt.ts";
import { buildGiteaDevPrompt } from "../prompt/gitea-dev-prompt.ts";
import type { RoundCommit } from "../work/deliver-work.ts";

export interface DevPromptContext {
  round: number;
  /** `- owner/name: ./path (branch …)` lines, relative to the session's directory. */
  workspaces: readonly string[];
  findings: readonly ReviewFinding[];
  /** The issue's latest reviewed plan (`/agent implement` after `/agent plan`). */
  plan?: string | undefined;
}

/**
 * What a dev round reads from the task's request, whichever door it came through: an approved
 * Telegram draft, or a Gitea command with its issue or PR. The round itself is the same.
 */
export interface DevRequest {
  /** The task whose working trees the round works in (a PR iterate: its implement command's). */
  workTaskId: number;
  /** An earlier task whose dev session a fresh round goes on in (a PR iterate's implement command). */
  sessionTaskId?: number;
  branch: string;
  repos: readonly string[];
  title: string | null;
  maxRounds: number;
  /** True when the prompt follows the issue's reviewed plan (read before the prompt is built). */
  followsPlan: boolean;
  /** One-shot requests (`/agent fix`) are delivered by the dev round itself, never reviewed. */
  oneShot: boolean;
  commit(round: number): RoundCommit;
  prompt(context: DevPromptContext): string;
}

function draftRequest(task: Task): DevRequest {
  const title = task.title ?? `task ${task.id}`;
  return {
    workTaskId: task.id,
    branch: taskBranch(task),
    repos: task.repos,
    title: task.title,
    maxRounds: task.maxRounds,
    followsPlan: false,
    oneShot: false,
    commit: (round) => ({ message: commitMessage({ taskId: task.id, title, round }), trailer: roundTrailer({ taskId: task.id, round }) }),
    prompt: ({ round, workspaces, findings }) =>
      buildDevPrompt({
        taskId: task.id,
        round,
        maxRounds: task.maxRounds,
        title: task.title,
        goal: task.goal,
        why: task.why,
        acceptanceCriteria: task.acceptanceCriteria,
        workspaces,
        findings,
      }),
  };
}

function commandRequest(task: Task): DevRequest {
  const origin = iteratedCommandOf(task);
  const command = task.commandKind ?? "implement";
  const maxRounds = command === "fix" ? 1 : task.maxRounds;
  const sign = task.targetType === "pr" ? "!" : "#";
  return {
    workTaskId: origin ?? task.id,
    ...(origin === undefined ? {} : { sessionTaskId: origin }),
    branch: task.branch ?? "",
    repos: task.repos.slice(0, 1),
    title: task.title,
    maxRounds,
    followsPlan: command === "implement",
    oneShot: command === "fix",
    commit: (round) => {
      const trailer = roundTrailer({ taskId: task.id, round, noun: "command" });
      const title = task.title ?? `command ${task.id}`;
      return { message: `${command === "fix" ? `agent: fix ${title}` : `agent: ${title}`}\n\n${trailer}`, trailer };
    },
    prompt: ({ round, workspaces, findings, plan }) =>
      buildGiteaDevPrompt({
        taskId: task.id,
        command,
        target: `${task.repoOwner}/${task.repoName}${sign}${task.targetNumber}`,
        round,
        maxRounds,
        requester: task.requesterLogin ?? "?",
        title: task.title,
        body: task.goal,
        message: task.commandMessage,
        plan,
        workspaces,
        findings,
      }),
  };
}

/** The request a task carries: a Gitea command's when it has one, else its approved draft. */
export function devRequestOf(task: Task): DevRequest {
  return task.commandKind ? commandRequest(task) : draftRequest(task);
}
