import {
  IllegalTransitionError,
  isBlockingFinding,
  reviewVerdictSchema,
  type ReviewFinding,
  type ReviewJob,
  type ReviewVerdict,
  type TaskEvent,
} from "@ratatoskr/contracts";
import type { ApplyTransitionOptions, AppliedTransition, Repositories, Task } from "@ratatoskr/db";
import type { GitWorkspaces } from "@ratatoskr/git";
import { VerdictValidationError, type AgentPolicy, type AgentRunResult, type OpencodeClient } from "@ratatoskr/opencode";
import {
  isStepSettled,
  latestDevCommit,
  prepareTaskWorkspaces,
  runTraced,
  settleDeadRuns,
  taskBranch,
  watchTaskStatus,
  type TracedRunDeps,
} from "@ratatoskr/pipeline";
import { PermanentError, skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { buildReviewPrompt } from "../prompt/review-prompt.ts";

export const REVIEWER_AGENT = "reviewer";

/** Reads only: no edit, no write, no commands, no web (agents/reviewer.md says the same to opencode). */
export const REVIEWER_POLICY: AgentPolicy = {
  permissions: { read: "allow", glob: "allow", grep: "allow", list: "allow" },
  default: "deny",
};

const SETTLED_BY = ["review.passed", "review.rejected", "run.failed", "run.timed_out"] as const;

export type TransitionFn = (taskId: number, event: TaskEvent, options?: ApplyTransitionOptions) => Promise<AppliedTransition>;

export interface ReviewHandlerDeps {
  repos: Pick<Repositories, "tasks" | "traces" | "events">;
  transition: TransitionFn;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "baseUrl">;
  git: GitWorkspaces;
  idleTimeoutMs: number;
  hardTimeoutMs: number;
  maxDiffChars: number;
  statusPollMs: number;
}

type Ctx = JobContext<"review">;

function isLastAttempt(ctx: Ctx): boolean {
  return ctx.job.attemptsMade + 1 >= (ctx.job.opts.attempts ?? 1);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

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
    const task = await deps.repos.tasks.findById(data.taskId);
    if (!task) return skipped(`task ${data.taskId} does not exist`);
    if (task.status !== "running") return skipped(`task ${task.id} is ${task.status}`);
    if (task.round !== data.round) return skipped(`task ${task.id} is in round ${task.round}, not ${data.round}`);
    const events = await deps.repos.events.list(task.id);
    if (isStepSettled(ctx.job.id, task.id, events, SETTLED_BY)) return skipped(`review ${ctx.job.id} already reported back`);
    const review = new Review(deps, data, ctx);
    try {
      return await review.run(task, latestDevCommit(events));
    } catch (err) {
      if (ctx.signal.aborted || !isLastAttempt(ctx)) throw err;
      await review.report({ type: "run.failed", reason: `review of round ${data.round} failed: ${messageOf(err)}` });
      throw err;
    }
  };
}

class Review {
  private readonly traced: TracedRunDeps;

  constructor(
    private readonly deps: ReviewHandlerDeps,
    private readonly data: ReviewJob,
    private readonly ctx: Ctx,
  ) {
    this.traced = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger };
  }

  async report(event: TaskEvent): Promise<boolean> {
    try {
      await this.deps.transition(this.data.taskId, event);
      this.ctx.logger.info({ event: event.type }, "review reported");
      return true;
    } catch (err) {
      if (!(err instanceof IllegalTransitionError)) throw err;
      this.ctx.logger.info({ refusal: err.refusal }, "task moved on during the review; its verdict is dropped");
      return false;
    }
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
    const { resumeSessionId } = await settleDeadRuns(this.traced, task.id, REVIEWER_AGENT);
    let result = await this.runAgent(task, prompt, resumeSessionId);
    if (result === "stopped") return skipped("task stopped during the review");
    if (result.outcome === "failed" && result.error instanceof VerdictValidationError) {
      this.ctx.logger.warn({ sessionId: result.sessionId, error: result.error.message }, "verdict unreadable after repair; one more run");
      result = await this.runAgent(task, prompt, result.sessionId);
      if (result === "stopped") return skipped("task stopped during the review");
    }
    return this.settle(task, result, commit);
  }

  private async runAgent(
    task: Task,
    prompt: string,
    sessionId: string | undefined,
  ): Promise<AgentRunResult<ReviewVerdict> | "stopped"> {
    const watch = watchTaskStatus({
      readStatus: async () => (await this.deps.repos.tasks.findById(task.id))?.status,
      continueIn: new Set(["running"]),
      intervalMs: this.deps.statusPollMs,
      parent: this.ctx.signal,
      onError: (err) => this.ctx.logger.warn({ err }, "could not re-read the task during the review"),
    });
    try {
      const result = await runTraced(this.traced, {
        taskId: task.id,
        round: this.data.round,
        storeOnTask: true,
        run: {
          agent: REVIEWER_AGENT,
          directory: this.deps.git.taskDir(task.id),
          prompt,
          policy: REVIEWER_POLICY,
          schema: reviewVerdictSchema,
          idleTimeoutMs: this.deps.idleTimeoutMs,
          hardTimeoutMs: this.deps.hardTimeoutMs,
          signal: watch.signal,
          ...(sessionId ? { sessionId } : {}),
        },
      });
      if (watch.stoppedBy()) return "stopped";
      if (this.ctx.signal.aborted) throw new Error("review interrupted by shutdown; the job goes back to the queue");
      return result;
    } finally {
      watch.stop();
    }
  }

  private async settle(task: Task, result: AgentRunResult<ReviewVerdict>, commit: string | undefined): Promise<unknown> {
    const round = this.data.round;
    if (result.outcome !== "ok" || !result.verdict) {
      const reason = result.error?.message ?? `run ended ${result.outcome}`;
      const unreadable = result.error instanceof VerdictValidationError;
      if (!unreadable && result.outcome === "failed" && !isLastAttempt(this.ctx)) {
        throw new Error(`review run failed, will retry: ${reason}`);
      }
      const why = unreadable ? "the reviewer's verdict stayed unreadable after a repair and a retry" : `the review ${result.outcome === "timeout" ? "timed out" : "failed"}`;
      await this.report({ type: "run.failed", reason: `${why} (round ${round}): ${reason}` });
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
