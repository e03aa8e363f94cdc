import { withCause, type DevJob, type TaskEvent } from "@ratatoskr/contracts";
import { budgetPassed, budgetStanding, type ApplyTransitionOptions, type Repositories, type Task } from "@ratatoskr/db";
import { commitMessage, movedRefsReason, PushRejectedError, roundTrailer, watchRemoteRefs, type GitWorkspaces, type Workspace } from "@ratatoskr/git";
import { VerdictValidationError, type AgentPolicy, type AgentRunResult, type OpencodeClient } from "@ratatoskr/opencode";
import {
  errorMessage,
  finishedRunOf,
  isLastAttempt,
  latestFindings,
  loadStepTask,
  overBudgetRefusal,
  prepareTaskWorkspaces,
  reportUnlessMovedOn,
  resumeOptions,
  runWhileTaskRuns,
  settleDeadRuns,
  taskBranch,
  workspaceLines,
  type RunBudget,
  type TransitionFn,
  type WatchedRunDeps,
} from "@ratatoskr/pipeline";
import { createJobProgress, skipped, type JobContext, type JobHandler, type JobProgressReporter } from "@ratatoskr/runtime";
import { buildContinuePrompt, buildDevPrompt } from "../prompt/dev-prompt.ts";
import { devReportSchema, type DevReport } from "../prompt/dev-report.schema.ts";
import { deliverWork, type DeliveredWork } from "../work/deliver-work.ts";

export const DEV_AGENT = "dev";

/** Edits and commands inside the session's directory; nothing outside it, no web. */
export const DEV_POLICY: AgentPolicy = {
  permissions: { edit: "allow", bash: "allow", read: "allow", webfetch: "deny", external_directory: "deny" },
  default: "deny",
};

/** The events that settle a dev job: once one of them is applied after the job was queued, a rerun is stale. */
const SETTLED_BY = ["dev.finished", "run.failed", "run.timed_out"] as const;

export interface DevHandlerDeps {
  repos: Pick<Repositories, "tasks" | "traces" | "events">;
  transition: TransitionFn;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls" | "sessionProgress">;
  git: GitWorkspaces;
  idleTimeoutMs: number;
  hardTimeoutMs: number;
  statusPollMs: number;
}

type Ctx = JobContext<"dev">;

/** How a dev run ended for the round: stopped by the task leaving `running`, stopped by the budget, or its result. */
type DevRun =
  | { stopped: true }
  | { stopped: false; overBudget: RunBudget }
  | { stopped: false; overBudget?: undefined; result: AgentRunResult<DevReport> };

/**
 * The `dev` queue's handler (P1–P4): one dev round of an approved task. Re-reads the task before
 * every step, so a cancelled task never starts or goes on; runs the dev agent in the task's
 * working trees; commits and pushes without force; reports exactly one of dev.finished,
 * run.failed or run.timed_out.
 */
export function createDevRoundHandler(deps: DevHandlerDeps): JobHandler<"dev"> {
  return async (data, ctx) => {
    const rule = { step: "dev job", settledBy: SETTLED_BY, statuses: ["approved", "running"], round: data.round };
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, rule);
    if ("skip" in found) return skipped(found.skip);
    const { task } = found;
    // The run an earlier attempt of this job finished is paid for: the budget has nothing to hold back.
    const finished = await finishedRunOf(deps.repos.traces, { taskId: task.id, agent: DEV_AGENT, jobId: ctx.job.id, schema: devReportSchema });
    const overBudget = data.kind === "fix" || finished ? undefined : await overBudgetRefusal(deps, task.id, data.kind);
    if (overBudget) return skipped(overBudget);
    const round = new DevRound(deps, data, ctx);
    try {
      return await round.run(task, finished);
    } catch (err) {
      if (ctx.signal.aborted || !isLastAttempt(ctx.job)) throw err;
      // The last attempt settles the task: a person learns why, instead of a task stuck running.
      await round.report({ type: "run.failed", reason: withCause(`dev round ${data.round} failed`, errorMessage(err)) });
      throw err;
    }
  };
}

class DevRound {
  private readonly progress: JobProgressReporter;
  private readonly traced: WatchedRunDeps;

  constructor(
    private readonly deps: DevHandlerDeps,
    private readonly data: DevJob,
    private readonly ctx: Ctx,
  ) {
    this.progress = createJobProgress(ctx.job, { stage: "preparing workspaces", round: data.round }, ctx.logger);
    const { traces, tasks } = deps.repos;
    this.traced = { traces, tasks, opencode: deps.opencode, logger: ctx.logger, progress: this.progress, statusPollMs: deps.statusPollMs };
  }

  /** Applies an event; false when the task moved on meanwhile (e.g. cancelled). */
  async report(event: TaskEvent, options?: ApplyTransitionOptions): Promise<boolean> {
    return reportUnlessMovedOn(
      async () => {
        await this.deps.transition(this.data.taskId, event, options);
        this.ctx.logger.info({ event: event.type }, "dev round reported");
      },
      this.ctx.logger,
      "task moved on during the dev round; its report is dropped",
    );
  }

  async run(task: Task, finished: AgentRunResult<DevReport> | undefined): Promise<unknown> {
    const branch = taskBranch(task);
    if (task.status === "approved" && !(await this.report({ type: "dev.started" }, { patch: { branch } }))) {
      return skipped("task moved on before the dev round started");
    }
    let workspaces: Workspace[];
    try {
      workspaces = await prepareTaskWorkspaces(this.deps.git, { ...task, branch });
    } catch (err) {
      await this.report({ type: "run.failed", reason: withCause("could not prepare the repositories", errorMessage(err)) });
      return { status: "failed", reason: "workspace" };
    }
    if (!(await this.stillRunning())) return skipped("task moved on while its repositories were prepared");
    const pickedUp = finished ? await this.pickUp(task, workspaces, finished) : undefined;
    if (pickedUp) return pickedUp;

    const remote = await watchRemoteRefs(this.deps.git, workspaces);
    const run = await this.runAgent(task, workspaces);
    // Only the service pushes, and only the task branch: anything else that moved fails the task.
    const moved = await remote.moved();
    if (moved.length > 0) {
      await this.report({ type: "run.failed", reason: movedRefsReason(moved) });
      return { status: "failed", reason: "remote-refs-moved" };
    }
    if (run.stopped) {
      await this.deliverQuietly(task, workspaces);
      return skipped("task stopped during the dev run; the work so far is pushed");
    }
    if (run.overBudget) return this.pauseForBudget(task, workspaces, run.overBudget);
    return this.settle(task, workspaces, run.result);
  }

  /**
   * The run passed the task's budget and was interrupted: its work is pushed and kept, and the
   * task waits for the person. Continue runs `continue` in the same session, which holds the
   * run's context.
   */
  private async pauseForBudget(task: Task, workspaces: Workspace[], overBudget: RunBudget): Promise<unknown> {
    const delivered = await this.deliverUnlessRejected(task, workspaces);
    if ("failed" in delivered) return delivered.failed;
    this.ctx.logger.info({ ...overBudget, commit: delivered.commit }, "dev run stopped by the task's budget; its work is pushed");
    await this.report({ type: "budget.exceeded", ...overBudget, step: "continue" });
    return { status: "paused", round: this.data.round, commit: delivered.commit };
  }

  private async stillRunning(): Promise<boolean> {
    const task = await this.deps.repos.tasks.findById(this.data.taskId);
    return task?.status === "running";
  }

  private async prompt(task: Task, workspaces: Workspace[]): Promise<string> {
    if (this.data.kind === "continue") return buildContinuePrompt(task.id, this.data.round);
    const findings = this.data.kind === "revise" ? latestFindings(await this.deps.repos.events.list(task.id)) : [];
    return buildDevPrompt({
      taskId: task.id,
      round: this.data.round,
      maxRounds: task.maxRounds,
      title: task.title,
      goal: task.goal,
      why: task.why,
      acceptanceCriteria: task.acceptanceCriteria,
      workspaces: workspaceLines(this.deps.git.taskDir(task.id), workspaces),
      findings,
    });
  }

  /** The agent run, watched: stopped when the task left `running` (cancel), or by its budget. */
  private async runAgent(task: Task, workspaces: Workspace[]): Promise<DevRun> {
    const resume = await this.sessionToResume(task);
    const budget = this.data.kind === "fix" ? undefined : await budgetStanding(this.deps.repos, task.id);
    const { stoppedBy, result, overBudget } = await runWhileTaskRuns(this.traced, {
      taskId: task.id,
      round: this.data.round,
      storeOnTask: true,
      jobId: this.ctx.job.id,
      signal: this.ctx.signal,
      what: "dev run",
      run: {
        agent: DEV_AGENT,
        directory: this.deps.git.taskDir(task.id),
        prompt: await this.prompt(task, workspaces),
        policy: DEV_POLICY,
        schema: devReportSchema,
        idleTimeoutMs: this.deps.idleTimeoutMs,
        hardTimeoutMs: this.deps.hardTimeoutMs,
        ...resume,
      },
      budget,
    });
    if (overBudget) return { stopped: false, overBudget };
    if (!stoppedBy) return { stopped: false, result };
    this.ctx.logger.info({ status: stoppedBy, sessionId: result.sessionId }, "dev run interrupted: the task stopped");
    return { stopped: true };
  }

  /**
   * The session the run goes on in, on the opencode server that holds it: a retried job's dead
   * attempt's; for `continue` (after a timeout, a failure or a budget pause) and for a revise
   * round, the task's latest dev session, which holds what the agent learnt of the code. Only
   * `implement` starts afresh.
   */
  private async sessionToResume(task: Task): Promise<{ sessionId?: string; serverUrl?: string }> {
    const dead = await settleDeadRuns(this.traced, task.id, DEV_AGENT);
    if (dead.resumeSessionId) return resumeOptions(dead.resumeSessionId, dead.resumeServerUrl);
    if (this.data.kind !== "continue" && this.data.kind !== "revise") return {};
    const latest = await this.deps.repos.traces.findLatest(task.id, DEV_AGENT);
    return resumeOptions(latest?.sessionId, latest?.serverUrl);
  }

  private async deliver(task: Task, workspaces: Workspace[]): Promise<DeliveredWork> {
    await this.progress.report({ stage: "committing and pushing" });
    const round = { taskId: task.id, title: task.title ?? `task ${task.id}`, round: this.data.round };
    return deliverWork(this.deps.git, workspaces, { message: commitMessage(round), trailer: roundTrailer(round) });
  }

  private async deliverQuietly(task: Task, workspaces: Workspace[]): Promise<void> {
    await this.deliver(task, workspaces).catch((err: unknown) =>
      this.ctx.logger.warn({ err }, "could not push the work of a stopped dev run"),
    );
  }

  private async settle(task: Task, workspaces: Workspace[], result: AgentRunResult<DevReport>): Promise<unknown> {
    const round = this.data.round;
    // The closing summary is a courtesy: a run that edited files but botched its JSON still counts.
    const unreadableSummary = result.outcome === "failed" && result.error instanceof VerdictValidationError;
    if ((result.outcome === "failed" && !unreadableSummary) || result.outcome === "cancelled") {
      const reason = result.error?.message ?? `run ended ${result.outcome}`;
      if (!isLastAttempt(this.ctx.job)) throw new Error(`dev run failed, will retry: ${reason}`);
      await this.deliverQuietly(task, workspaces);
      await this.report({ type: "run.failed", reason: withCause(`the dev agent failed in round ${round}`, reason) });
      return { status: "failed", reason };
    }
    const delivered = await this.deliverUnlessRejected(task, workspaces);
    return "failed" in delivered ? delivered.failed : this.conclude(result, delivered);
  }

  /**
   * A retry of a job whose run finished before its process died (after its push, say): the run's
   * answer is reused and its work delivered from the tree or found on the branch, so the model is
   * not paid twice. Undefined when that work is in neither place (another replica's tree): the
   * round then runs again.
   */
  private async pickUp(task: Task, workspaces: Workspace[], finished: AgentRunResult<DevReport>): Promise<unknown> {
    const delivered = await this.deliverUnlessRejected(task, workspaces);
    if ("failed" in delivered) return delivered.failed;
    if (!delivered.changed && finished.outcome === "ok") {
      this.ctx.logger.warn({ sessionId: finished.sessionId }, "the finished dev run's work is neither in the tree nor on the branch; the round runs again");
      return undefined;
    }
    this.ctx.logger.info({ sessionId: finished.sessionId, commit: delivered.commit }, "picked up the dev run a dead attempt finished; the model is not run again");
    return this.conclude(finished, delivered);
  }

  private async deliverUnlessRejected(task: Task, workspaces: Workspace[]): Promise<DeliveredWork | { failed: unknown }> {
    try {
      return await this.deliver(task, workspaces);
    } catch (err) {
      if (!(err instanceof PushRejectedError)) throw err;
      // The error names the branch, the repository and why; a summary in front would say it twice.
      await this.report({ type: "run.failed", reason: err.message });
      return { failed: { status: "failed", reason: "push-rejected" } };
    }
  }

  /** What a delivered round reports: timed out, not done, nothing changed, or finished. */
  private async conclude(result: AgentRunResult<DevReport>, delivered: DeliveredWork): Promise<unknown> {
    const round = this.data.round;
    if (result.outcome === "timeout") {
      await this.report({ type: "run.timed_out" });
      return { status: "timeout", kind: result.timeoutKind, sessionId: result.sessionId, commit: delivered.commit };
    }
    if (result.verdict && !result.verdict.done) {
      await this.report({ type: "run.failed", reason: `the dev agent could not finish round ${round}: ${result.verdict.summary}` });
      return { status: "failed", reason: "not-done" };
    }
    if (!delivered.changed) {
      await this.report({ type: "run.failed", reason: `the dev agent changed nothing in round ${round}` });
      return { status: "failed", reason: "nothing-changed" };
    }
    // A round that passed the budget leaves its review to the person's Continue.
    const overBudget = this.data.kind === "fix" ? undefined : await budgetPassed(this.deps.repos, this.data.taskId);
    await this.report({ type: "dev.finished", commit: delivered.commit, ...(overBudget ? { overBudget } : {}) });
    return { status: "finished", round, commit: delivered.commit };
  }
}
