import { formatFinding, isBlockingFinding, reviewVerdictSchema, withCause, type ReviewJob, type ReviewVerdict, type TaskEvent } from "@ratatoskr/contracts";
import { budgetStanding, type ApplyTransitionOptions, type Task } from "@ratatoskr/db";
import { readOnlyBreachReason, watchTrees } from "@ratatoskr/git";
import { runCommandJob, visibleText, type HeartbeatRedis } from "@ratatoskr/gitea";
import { VerdictValidationError, type AgentRunResult } from "@ratatoskr/opencode";
import {
  loadStepTask,
  overBudgetRefusal,
  reportUnlessMovedOn,
  resumeOptions,
  runWhileTaskRuns,
  settleDeadRuns,
  stepSessionToResume,
  type RunBudget,
  type StoredEvent,
} from "@ratatoskr/pipeline";
import { createJobProgress, skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { z } from "zod";
import { REVIEWER_AGENT, REVIEWER_POLICY, reviewOutcome, type ReviewHandlerDeps } from "../handlers/review.handler.ts";
import { buildReviewPrompt } from "../prompt/review-prompt.ts";
import { buildPlanReviewPrompt } from "./plan-review-prompt.ts";

const SETTLED_BY = ["command.review-passed", "command.review-rejected", "command.succeeded", "command.failed", "command.cancelled", "command.interrupted"] as const;

export interface GiteaReviewDeps extends ReviewHandlerDeps {
  redis: HeartbeatRedis;
  prefix: string;
}

type Ctx = JobContext<"review">;
type Report = (event: TaskEvent, patch?: ApplyTransitionOptions["patch"]) => Promise<boolean>;

const drafted = z.object({ plan: z.string() });

/** The plan the planner wrote last for this command. */
export function latestPlanOf(events: readonly StoredEvent[]): string | undefined {
  const parsed = drafted.safeParse(events.filter((e) => e.type === "command.plan-drafted").at(-1)?.payload);
  return parsed.success ? parsed.data.plan : undefined;
}

/** `agent/issue-<N>-<taskId>` of a PR iterate → the implement command whose review session it resumes. */
function originOf(task: Task): number | undefined {
  const match = /^agent\/issue-\d+-(\d+)$/.exec(task.branch ?? "");
  return task.commandKind === "iterate" && task.targetType === "pr" && match ? Number(match[1]) : undefined;
}

/**
 * The `review` queue for Gitea commands (G3): reviews the pushed branch diff of `implement`, a
 * PR `iterate` (resuming the PR's reviewer session once) or the plan of `plan`/`iterate`, and
 * reports passed (minor findings kept for the PR) or rejected (findings for the next round).
 */
export function createGiteaReviewHandler(deps: GiteaReviewDeps): JobHandler<"review"> {
  return async (data, ctx) => {
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, { step: "review", settledBy: SETTLED_BY, round: data.round });
    if ("skip" in found) return skipped(found.skip);
    const { task, events } = found;
    const report: Report = (event, patch) =>
      reportUnlessMovedOn(
        () => deps.transition(task.id, event, patch ? { patch } : undefined),
        ctx.logger,
        "command moved on during the review; the verdict is dropped",
      );
    return runCommandJob(
      {
        redis: deps.redis,
        prefix: deps.prefix,
        taskId: task.id,
        jobId: ctx.job.id ?? `${task.id}-review-${data.round}`,
        signal: ctx.signal,
        what: `the review of round ${data.round}`,
        settleDeadRuns: () =>
          settleDeadRuns({ traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger }, task.id, REVIEWER_AGENT),
        fail: (reason) => report({ type: "command.failed", reason: "error" }, { failureReason: reason }),
      },
      () => review(deps, data, ctx, task, events, report),
    );
  };
}

async function review(deps: GiteaReviewDeps, data: ReviewJob, ctx: Ctx, task: Task, events: readonly StoredEvent[], report: Report): Promise<unknown> {
  const origin = originOf(task);
  const workTaskId = origin ?? task.id;
  const planning = data.kind === "plan";
  // P5 before a code review, as on every door (a plan's rounds stay with the planner).
  const overBudget = planning ? undefined : await overBudgetRefusal(deps, task.id, "review");
  if (overBudget) return skipped(overBudget);
  // A plan is reviewed against the default branch (a local branch, never pushed).
  const ws = await deps.git.prepare({ taskId: workTaskId, repo: task.repos[0] ?? "", branch: planning ? `agent/plan-${task.id}` : (task.branch ?? "") });
  // Review what was pushed last, not the head this clone saw in an earlier round.
  if (!planning) await deps.git.syncToRemote(ws);
  let prompt: string;
  if (planning) {
    const plan = latestPlanOf(events);
    if (!plan) throw new Error("there is no plan to review");
    prompt = buildPlanReviewPrompt({ taskId: task.id, round: data.round, title: task.title, body: task.goal, plan });
  } else {
    const diff = await deps.git.diff(ws);
    if (diff.trim() === "") {
      await report({ type: "command.failed", reason: "empty-diff" }, { failureReason: `round ${data.round} left nothing to review: the branch has no changes` });
      return { status: "failed", reason: "empty-diff" };
    }
    const message = visibleText(task.commandMessage ?? "");
    prompt = buildReviewPrompt({
      taskId: task.id,
      round: data.round,
      title: task.title,
      goal: [visibleText(task.goal ?? ""), message ? `Request from @${task.requesterLogin}: ${message}` : ""].filter(Boolean).join("\n\n"),
      acceptanceCriteria: [],
      diff,
      maxDiffChars: deps.maxDiffChars,
    });
  }
  const traced = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger };
  // Its own session when a dead attempt or the budget stopped it; else a PR iterate's implement review.
  const own = await stepSessionToResume(traced, task.id, REVIEWER_AGENT, data.round);
  const latest = !own.sessionId && origin ? await deps.repos.traces.findLatest(origin, REVIEWER_AGENT) : null;
  const resume = own.sessionId ? own : resumeOptions(latest?.sessionId, latest?.serverUrl);
  // P5 during a code review too: its live spend is watched.
  const budget = planning ? undefined : await budgetStanding(deps.repos, task.id);
  const run = { task, workTaskId, round: data.round, prompt, budget };
  const trees = await watchTrees(deps.git, [ws]);
  let result = await runReviewer(deps, ctx, run, resume);
  if (result === "stopped") return skipped("command stopped during the review");
  if (result.outcome === "failed" && result.error instanceof VerdictValidationError) {
    result = await runReviewer(deps, ctx, run, resumeOptions(result.sessionId, result.serverUrl));
    if (result === "stopped") return skipped("command stopped during the review");
  }
  const touched = await trees.changed();
  if (touched.length > 0) {
    await report({ type: "command.failed", reason: "review" }, { failureReason: readOnlyBreachReason(REVIEWER_AGENT, touched) });
    return { status: "failed", reason: "read-only-breach" };
  }
  if (result.overBudget) {
    await report({ type: "budget.exceeded", ...result.overBudget, step: "review" });
    return { status: "paused", round: data.round };
  }
  if (result.outcome !== "ok" || !result.verdict) {
    const why = result.error instanceof VerdictValidationError ? "the reviewer's verdict stayed unreadable after a repair and a retry" : `the review ended ${result.outcome}`;
    await report({ type: "command.failed", reason: "review" }, { failureReason: withCause(`${why} (round ${data.round})`, result.error?.message ?? "") });
    return { status: "failed", reason: result.outcome };
  }
  const outcome = reviewOutcome(result.verdict);
  if (outcome.passed) {
    await report({ type: "command.review-passed", minor: result.verdict.findings.filter((f) => !isBlockingFinding(f)) });
    return { status: "passed", round: data.round };
  }
  const blocking = outcome.findings.filter(isBlockingFinding);
  await report(
    { type: "command.review-rejected", findings: outcome.findings },
    { failureReason: `the review still asks for changes after round ${data.round}:\n${blocking.map((f) => `- ${formatFinding(f)}`).join("\n")}` },
  );
  return { status: "rejected", round: data.round, findings: outcome.findings.length };
}

interface ReviewRun {
  task: Task;
  workTaskId: number;
  round: number;
  prompt: string;
  budget: RunBudget | undefined;
}

async function runReviewer(
  deps: GiteaReviewDeps,
  ctx: Ctx,
  { task, workTaskId, round, prompt, budget }: ReviewRun,
  resume: { sessionId?: string; serverUrl?: string },
): Promise<(AgentRunResult<ReviewVerdict> & { overBudget?: RunBudget }) | "stopped"> {
  // Live progress for Bull Board, and the samples the budget watches the run's spend by.
  const progress = createJobProgress(ctx.job, { stage: "reviewer agent", round }, ctx.logger);
  const traced = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger, statusPollMs: deps.statusPollMs, progress };
  const { stoppedBy, result, overBudget } = await runWhileTaskRuns(traced, {
    taskId: task.id,
    round,
    storeOnTask: true,
    signal: ctx.signal,
    what: "review",
    run: {
      agent: REVIEWER_AGENT,
      directory: deps.git.taskDir(workTaskId),
      prompt,
      policy: REVIEWER_POLICY,
      schema: reviewVerdictSchema,
      idleTimeoutMs: deps.idleTimeoutMs,
      hardTimeoutMs: deps.hardTimeoutMs,
      ...resume,
    },
    budget,
  });
  if (stoppedBy) return "stopped";
  return overBudget ? { ...result, overBudget } : result;
}
