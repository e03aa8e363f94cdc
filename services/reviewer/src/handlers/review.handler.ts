import {
  isBlockingFinding,
  reviewVerdictSchema,
  withCause,
  type ReviewFinding,
  type ReviewJob,
  type ReviewVerdict,
  type TaskEvent,
} from "@ratatoskr/contracts";
import { budgetStanding, type Repositories, type Task } from "@ratatoskr/db";
import { readOnlyBreachReason, watchTrees, type GitWorkspaces } from "@ratatoskr/git";
import { VerdictValidationError, type AgentPolicy, type AgentRunResult, type OpencodeClient } from "@ratatoskr/opencode";
import {
  errorMessage,
  isLastAttempt,
  latestDevCommit,
  loadStepTask,
  overBudgetRefusal,
  prepareTaskWorkspaces,
  reportUnlessMovedOn,
  resumeOptions,
  stepSessionToResume,
  runWhileTaskRuns,
  taskBranch,
  type RunBudget,
  type StepSessionDeps,
  type TransitionFn,
  type WatchedRunDeps,
} from "@ratatoskr/pipeline";
import { createJobProgress, PermanentError, skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { buildReviewPrompt } from "../prompt/review-prompt.ts";

export const REVIEWER_AGENT = "reviewer";

/** Reads only: no edit, no write, no commands, no web (agents/reviewer.md says the same to opencode). */
export const REVIEWER_POLICY: AgentPolicy = {
  permissions: { read: "allow", glob: "allow", grep: "allow", list: "allow" },
  default: "deny",
};

const SETTLED_BY = ["review.passed", "review.rejected", "run.failed", "run.timed_out"] as const;

export interface ReviewHandlerDeps {
  repos: Pick<Repositories, "tasks" | "traces" | "events">;
  transition: TransitionFn;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls" | "sessionProgress">;
  git: GitWorkspaces;
  idleTimeoutMs: number;
  hardTimeoutMs: number;
  maxDiffChars: number;
  statusPollMs: number;
}

type Ctx = JobContext<"review">;

/** Minor findings never fail a review; a rejection without a reason still names one. */
export function reviewOutcome(verdict: ReviewVerdict): { passed: true } | { passed: false; findings: ReviewFinding[] } {
  const blocking = verdict.findings.filter(isBlockingFinding);
  if (verdict.passed && blocking.length === 0) return { passed: true };
  if (blocking.length > 0) return { passed: false, findings: verdict.findings };
  if (verdict.passed) return { passed: true };
  const text = verdict.summary?.trim() || "the reviewer rejected the change without naming a finding";
  return { passed: false, findings: [...verdict.findings, { severity: "major", file: null, text }] };
}

/**
 * The `review` queue's handler (P3): the reviewer agent reads the whole branch diff of every
 * repository of the task and passes it (→ success, with branch and commit) or rejects it with
 * findings (→ the next dev round gets them). An unreadable verdict gets the client's repair
 * prompt, then one more run; then the task fails saying so.
 */
export function createReviewHandler(deps: ReviewHandlerDeps): JobHandler<"review"> {
  return async (data, ctx) => {
    if (data.kind !== "diff") throw new PermanentError("reviewer: plan reviews come with the Gitea commands (a later issue)");
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, { step: "review", settledBy: SETTLED_BY, round: data.round });
    if ("skip" in found) return skipped(found.skip);
    const { task, events } = found;
    const overBudget = await overBudgetRefusal(deps, task.id, "review");
    if (overBudget) return skipped(overBudget);
    const review = new Review(deps, data, ctx);
    try {
      return await review.run(task, latestDevCommit(events));
    } catch (err) {
      if (ctx.signal.aborted || !isLastAttempt(ctx.job)) throw err;
      await review.report({ type: "run.failed", reason: withCause(`review of round ${data.round} failed`, errorMessage(err)) });
      throw err;
    }
  };
}

class Review {
  private readonly traced: WatchedRunDeps & StepSessionDeps;

  constructor(
    private readonly deps: ReviewHandlerDeps,
    private readonly data: ReviewJob,
    private readonly ctx: Ctx,
  ) {
    const progress = createJobProgress(ctx.job, { stage: "preparing workspaces", round: data.round }, ctx.logger);
    const { traces, tasks } = deps.repos;
    this.traced = { traces, tasks, opencode: deps.opencode, logger: ctx.logger, progress, statusPollMs: deps.statusPollMs };
  }

  async report(event: TaskEvent): Promise<boolean> {
    return reportUnlessMovedOn(
      async () => {
        await this.deps.transition(this.data.taskId, event);
        this.ctx.logger.info({ event: event.type }, "review reported");
      },
      this.ctx.logger,
      "task moved on during the review; its verdict is dropped",
    );
  }

  async run(task: Task, commit: string | undefined): Promise<unknown> {
    const workspaces = await prepareTaskWorkspaces(this.deps.git, task);
    const diff = await this.deps.git.diffAll(workspaces);
    if (diff.trim() === "") {
      await this.report({ type: "run.failed", reason: `round ${this.data.round} left nothing to review: the branch has no changes` });
      return { status: "failed", reason: "empty-diff" };
    }
    const prompt = buildReviewPrompt({
      taskId: task.id,
      round: this.data.round,
      title: task.title,
      goal: task.goal,
      acceptanceCriteria: task.acceptanceCriteria,
      diff,
      maxDiffChars: this.deps.maxDiffChars,
    });
    const resume = await stepSessionToResume(this.traced, task.id, REVIEWER_AGENT, this.data.round);
    const budget = await budgetStanding(this.deps.repos, task.id);
    const trees = await watchTrees(this.deps.git, workspaces);
    let result = await this.runAgent(task, prompt, resume, budget);
    if (result === "stopped") return skipped("task stopped during the review");
    if (result.outcome === "failed" && result.error instanceof VerdictValidationError) {
      this.ctx.logger.warn({ sessionId: result.sessionId, error: result.error.message }, "verdict unreadable after repair; one more run");
      result = await this.runAgent(task, prompt, resumeOptions(result.sessionId, result.serverUrl), budget);
      if (result === "stopped") return skipped("task stopped during the review");
    }
    const touched = await trees.changed();
    if (touched.length > 0) {
      await this.report({ type: "run.failed", reason: readOnlyBreachReason(REVIEWER_AGENT, touched) });
      return { status: "failed", reason: "read-only-breach" };
    }
    if (result.overBudget) {
      // P5 during the review: the task pauses, and Continue runs this round's review again in its session.
      await this.report({ type: "budget.exceeded", ...result.overBudget, step: "review" });
      return { status: "paused", round: this.data.round };
    }
    return this.settle(task, result, commit);
  }

  private async runAgent(
    task: Task,
    prompt: string,
    resume: { sessionId?: string; serverUrl?: string },
    budget: RunBudget | undefined,
  ): Promise<(AgentRunResult<ReviewVerdict> & { overBudget?: RunBudget }) | "stopped"> {
    const { stoppedBy, result, overBudget } = await runWhileTaskRuns(this.traced, {
      taskId: task.id,
      round: this.data.round,
      storeOnTask: true,
      signal: this.ctx.signal,
      what: "review",
      run: {
        agent: REVIEWER_AGENT,
        directory: this.deps.git.taskDir(task.id),
        prompt,
        policy: REVIEWER_POLICY,
        schema: reviewVerdictSchema,
        idleTimeoutMs: this.deps.idleTimeoutMs,
        hardTimeoutMs: this.deps.hardTimeoutMs,
        ...resume,
      },
      budget,
    });
    if (stoppedBy) return "stopped";
    return overBudget ? { ...result, overBudget } : result;
  }

  private async settle(task: Task, result: AgentRunResult<ReviewVerdict>, commit: string | undefined): Promise<unknown> {
    const round = this.data.round;
    if (result.outcome !== "ok" || !result.verdict) {
      const reason = result.error?.message ?? `run ended ${result.outcome}`;
      const unreadable = result.error instanceof VerdictValidationError;
      if (!unreadable && result.outcome === "failed" && !isLastAttempt(this.ctx.job)) {
        throw new Error(`review run failed, will retry: ${reason}`);
      }
      const why = unreadable ? "the reviewer's verdict stayed unreadable after a repair and a retry" : `the review ${result.outcome === "timeout" ? "timed out" : "failed"}`;
      await this.report({ type: "run.failed", reason: withCause(`${why} (round ${round})`, reason) });
      return { status: "failed", reason };
    }
    const outcome = reviewOutcome(result.verdict);
    if (outcome.passed) {
      await this.report({ type: "review.passed", branch: taskBranch(task), commit: commit ?? "unknown" });
      return { status: "passed", round };
    }
    await this.report({ type: "review.rejected", findings: outcome.findings });
    return { status: "rejected", round, findings: outcome.findings.length };
  }
}
