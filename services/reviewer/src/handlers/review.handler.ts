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
import { readOnlyBreachReason, watchTrees, type GitWorkspaces, type Workspace } from "@ratatoskr/git";
import { VerdictValidationError, type AgentPolicy, type AgentRunResult, type OpencodeClient } from "@ratatoskr/opencode";
import {
  errorMessage,
  finishedRunOf,
  isLastAttempt,
  knownFailureCause,
  latestDevCommit,
  loadStepTask,
  overBudgetRefusal,
  prepareTaskWorkspaces,
  reportUnlessMovedOn,
  resumeOptions,
  stepSessionToResume,
  runWhileTaskRuns,
  type RunBudget,
  type StepSessionDeps,
  type StoredEvent,
  type TransitionFn,
  type WatchedRunDeps,
} from "@ratatoskr/pipeline";
import { createJobProgress, skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { z } from "zod";
import { reviewRequestOf, type ReviewRequest } from "../request/review-request.ts";

export const REVIEWER_AGENT = "reviewer";

/** Reads only: no edit, no write, no commands, no web (agents/reviewer.md says the same to opencode). */
export const REVIEWER_POLICY: AgentPolicy = {
  permissions: { read: "allow", glob: "allow", grep: "allow", list: "allow" },
  default: "deny",
};

const SETTLED_BY = ["review.passed", "review.rejected", "run.succeeded", "run.failed", "run.timed_out"] as const;

export interface ReviewHandlerDeps {
  repos: Pick<Repositories, "tasks" | "traces" | "events">;
  transition: TransitionFn;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls" | "sessionProgress" | "finishedTurn">;
  git: GitWorkspaces;
  idleTimeoutMs: number;
  hardTimeoutMs: number;
  maxDiffChars: number;
  statusPollMs: number;
}

type Ctx = JobContext<"review">;
type ReviewRun = (AgentRunResult<ReviewVerdict> & { overBudget?: RunBudget }) | "stopped";

/** Minor findings never fail a review; a rejection without a reason still names one. */
export function reviewOutcome(verdict: ReviewVerdict): { passed: true } | { passed: false; findings: ReviewFinding[] } {
  const blocking = verdict.findings.filter(isBlockingFinding);
  if (verdict.passed && blocking.length === 0) return { passed: true };
  if (blocking.length > 0) return { passed: false, findings: verdict.findings };
  if (verdict.passed) return { passed: true };
  const text = verdict.summary?.trim() || "the reviewer rejected the change without naming a finding";
  return { passed: false, findings: [...verdict.findings, { severity: "major", file: null, text }] };
}

const drafted = z.object({ plan: z.string() });

/** The plan the planner wrote last for this command. */
export function latestPlanOf(events: readonly StoredEvent[]): string | undefined {
  const parsed = drafted.safeParse(events.filter((e) => e.type === "plan.drafted").at(-1)?.payload);
  return parsed.success ? parsed.data.plan : undefined;
}

/**
 * The `review` queue's handler (P3), one for every door: the reviewer agent reads the whole
 * pushed branch diff of every repository of the task (or a command's plan, against the default
 * branch) and passes it (minor findings kept) or rejects it with findings for the next round.
 * An unreadable verdict gets the client's repair prompt, then one more run; then the task fails
 * saying so. A job back after its process died goes on from what its dead attempt did: a
 * finished run's verdict is reported (the model is not paid twice), a cut-off run resumes its session.
 */
export function createReviewHandler(deps: ReviewHandlerDeps): JobHandler<"review"> {
  return async (data, ctx) => {
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, { step: "review", settledBy: SETTLED_BY, round: data.round });
    if ("skip" in found) return skipped(found.skip);
    const { task, events } = found;
    // The run an earlier attempt of this job finished is paid for: the budget has nothing to hold back.
    const finished = await finishedRunOf(deps.repos.traces, { taskId: task.id, agent: REVIEWER_AGENT, jobId: ctx.job.id, schema: reviewVerdictSchema }, deps.opencode);
    // P5 before a code review (a plan's rounds stay with the planner).
    const overBudget = finished || data.kind === "plan" ? undefined : await overBudgetRefusal(deps, task.id, "review");
    if (overBudget) return skipped(overBudget);
    const review = new Review(deps, data, ctx, task);
    try {
      if (finished) return await review.pickUp(finished, events);
      return await review.run(events);
    } catch (err) {
      if (ctx.signal.aborted || !isLastAttempt(ctx.job)) throw err;
      await review.report({ type: "run.failed", reason: withCause(`review of round ${data.round} failed`, errorMessage(err)), ...knownFailureCause(err) });
      throw err;
    }
  };
}

class Review {
  private readonly traced: WatchedRunDeps & StepSessionDeps;
  private readonly request: ReviewRequest;
  private readonly planning: boolean;

  constructor(
    private readonly deps: ReviewHandlerDeps,
    private readonly data: ReviewJob,
    private readonly ctx: Ctx,
    private readonly task: Task,
  ) {
    const progress = createJobProgress(ctx.job, { stage: "preparing workspaces", round: data.round }, ctx.logger);
    const { traces, tasks } = deps.repos;
    this.traced = { traces, tasks, opencode: deps.opencode, logger: ctx.logger, progress, statusPollMs: deps.statusPollMs };
    this.request = reviewRequestOf(task);
    this.planning = data.kind === "plan";
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

  /** A plan is read against the default branch (a local branch, never pushed); code as it was pushed last. */
  private async workspaces(): Promise<Workspace[]> {
    const { request, task } = this;
    const branch = this.planning ? `agent/plan-${task.id}` : request.branch;
    const workspaces = await prepareTaskWorkspaces(this.deps.git, { id: request.workTaskId, title: task.title, repos: request.repos, branch });
    if (!this.planning) for (const ws of workspaces) await this.deps.git.syncToRemote(ws);
    return workspaces;
  }

  /** The prompt, or undefined when there is nothing to review (the task has then failed, saying so). */
  private async prompt(workspaces: Workspace[], events: readonly StoredEvent[]): Promise<string | undefined> {
    const round = this.data.round;
    if (this.planning) {
      const plan = latestPlanOf(events);
      if (!plan) throw new Error("there is no plan to review");
      return this.request.planPrompt({ round, plan });
    }
    const diff = await this.deps.git.diffAll(workspaces);
    if (diff.trim() !== "") return this.request.diffPrompt({ round, diff, maxDiffChars: this.deps.maxDiffChars });
    await this.report({ type: "run.failed", reason: `round ${round} left nothing to review: the branch has no changes` });
    return undefined;
  }

  async run(events: readonly StoredEvent[]): Promise<unknown> {
    const workspaces = await this.workspaces();
    const prompt = await this.prompt(workspaces, events);
    if (prompt === undefined) return { status: "failed", reason: "empty-diff" };
    const resume = await this.sessionToResume();
    const budget = this.planning ? undefined : await budgetStanding(this.deps.repos, this.task.id);
    const trees = await watchTrees(this.deps.git, workspaces);
    let result = await this.runAgent(prompt, resume, budget);
    if (result === "stopped") return skipped("task stopped during the review");
    if (result.outcome === "failed" && result.error instanceof VerdictValidationError) {
      this.ctx.logger.warn({ sessionId: result.sessionId, error: result.error.message }, "verdict unreadable after repair; one more run");
      result = await this.runAgent(prompt, resumeOptions(result.sessionId, result.serverUrl), budget);
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
    return this.settle(result, latestDevCommit(events));
  }

  /**
   * A retry of a job whose review run finished before its process died (before its verdict was
   * reported): the run's verdict is reported as it stands, so the model is not paid twice.
   */
  async pickUp(finished: AgentRunResult<ReviewVerdict>, events: readonly StoredEvent[]): Promise<unknown> {
    this.ctx.logger.info({ sessionId: finished.sessionId }, "picked up the review run a dead attempt finished; the model is not run again");
    return this.settle(finished, latestDevCommit(events));
  }

  /** Its own session when a dead attempt or the budget stopped it; else a PR iterate's implement review. */
  private async sessionToResume(): Promise<{ sessionId?: string; serverUrl?: string }> {
    const own = await stepSessionToResume(this.traced, this.task.id, REVIEWER_AGENT, this.data.round);
    if (own.sessionId || this.request.sessionTaskId === undefined) return own;
    const latest = await this.deps.repos.traces.findLatest(this.request.sessionTaskId, REVIEWER_AGENT);
    return resumeOptions(latest?.sessionId, latest?.serverUrl);
  }

  private async runAgent(prompt: string, resume: { sessionId?: string; serverUrl?: string }, budget: RunBudget | undefined): Promise<ReviewRun> {
    const { stoppedBy, result, overBudget } = await runWhileTaskRuns(this.traced, {
      taskId: this.task.id,
      round: this.data.round,
      storeOnTask: true,
      jobId: this.ctx.job.id,
      signal: this.ctx.signal,
      what: "review",
      run: {
        agent: REVIEWER_AGENT,
        directory: this.deps.git.taskDir(this.request.workTaskId),
        prompt,
        policy: REVIEWER_POLICY,
        schema: reviewVerdictSchema,
        idleTimeoutMs: this.deps.idleTimeoutMs,
        hardTimeoutMs: this.deps.hardTimeoutMs,
        // A new session goes where the task's last one ran: that server has loaded the directory.
        ...(this.task.agentServerUrl ? { preferServerUrl: this.task.agentServerUrl } : {}),
        ...resume,
      },
      budget,
    });
    if (stoppedBy) return "stopped";
    return overBudget ? { ...result, overBudget } : result;
  }

  private async settle(result: AgentRunResult<ReviewVerdict>, commit: string | undefined): Promise<unknown> {
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
      const minor = result.verdict.findings.filter((f) => !isBlockingFinding(f));
      const reviewed = this.planning ? {} : { branch: this.request.branch, commit: commit ?? "unknown" };
      await this.report({ type: "review.passed", ...reviewed, minor });
      return { status: "passed", round };
    }
    await this.report({ type: "review.rejected", findings: outcome.findings });
    return { status: "rejected", round, findings: outcome.findings.length };
  }
}
