import { withCause, type DevJob, type TaskEvent } from "@ratatoskr/contracts";
import { budgetPassed, budgetStanding, type ApplyTransitionOptions, type Repositories, type Task } from "@ratatoskr/db";
import { movedRefsReason, PushRejectedError, watchRemoteRefs, type GitWorkspaces, type Workspace } from "@ratatoskr/git";
import { VerdictValidationError, type AgentPolicy, type AgentRunResult, type OpencodeClient } from "@ratatoskr/opencode";
import {
  errorMessage,
  finishedRunOf,
  isLastAttempt,
  knownFailureCause,
  latestFindings,
  loadStepTask,
  overBudgetRefusal,
  prepareTaskWorkspaces,
  reportUnlessMovedOn,
  resumeOptions,
  runWhileTaskRuns,
  settleDeadRuns,
  workspaceLines,
  type RunBudget,
  type TransitionFn,
  type WatchedRunDeps,
} from "@ratatoskr/pipeline";
import { createJobProgress, skipped, type JobContext, type JobHandler, type JobProgressReporter } from "@ratatoskr/runtime";
import { buildContinuePrompt } from "../prompt/dev-prompt.ts";
import { devReportSchema, type DevReport } from "../prompt/dev-report.schema.ts";
import { devRequestOf, type DevRequest } from "../request/dev-request.ts";
import { deliverWork, type DeliveredWork } from "../work/deliver-work.ts";

export const DEV_AGENT = "dev";

/** Edits and commands inside the session's directory; nothing outside it, no web. */
export const DEV_POLICY: AgentPolicy = {
  permissions: { edit: "allow", bash: "allow", read: "allow", webfetch: "deny", external_directory: "deny" },
  default: "deny",
};

/** The events that settle a dev job: once one of them is applied after the job was queued, a rerun is stale. */
const SETTLED_BY = ["dev.finished", "run.succeeded", "run.failed", "run.timed_out"] as const;

export interface DevHandlerDeps {
  repos: Pick<Repositories, "traces" | "events"> & { tasks: Repositories["tasks"] };
  transition: TransitionFn;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls" | "sessionProgress" | "finishedTurn">;
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
 * The `dev` queue's handler (P1–P5), one for every door: one dev round of a task in the pipeline,
 * from an approved draft or a Gitea command alike (the door's part is the task's request, see
 * `devRequestOf`). Re-reads the task before every step, so a cancelled task never starts or
 * goes on; runs the dev agent in the task's working trees; commits and pushes without force;
 * reports exactly one of dev.finished, run.succeeded (a one-shot fix), budget.exceeded,
 * run.failed or run.timed_out. A job back after its process died goes on from what its dead
 * attempt did: a finished run is reused (never paid twice), a cut-off run resumes its session.
 */
export function createDevRoundHandler(deps: DevHandlerDeps): JobHandler<"dev"> {
  return async (data, ctx) => {
    const rule = { step: "dev job", settledBy: SETTLED_BY, statuses: ["approved", "running"], round: data.round };
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, rule);
    if ("skip" in found) return skipped(found.skip);
    const { task } = found;
    // The run an earlier attempt of this job finished is paid for: the budget has nothing to hold back.
    const finished = await finishedRunOf(deps.repos.traces, { taskId: task.id, agent: DEV_AGENT, jobId: ctx.job.id, schema: devReportSchema }, deps.opencode);
    const overBudget = finished ? undefined : await overBudgetRefusal(deps, task.id, data.kind);
    if (overBudget) return skipped(overBudget);
    const round = new DevRound(deps, data, ctx, task);
    try {
      return await round.run(finished);
    } catch (err) {
      if (ctx.signal.aborted || !isLastAttempt(ctx.job)) throw err;
      // The last attempt settles the task: a person learns why, instead of a task stuck running.
      await round.report({ type: "run.failed", reason: withCause(`dev round ${data.round} failed`, errorMessage(err)), ...knownFailureCause(err) });
      throw err;
    }
  };
}

class DevRound {
  private readonly progress: JobProgressReporter;
  private readonly traced: WatchedRunDeps;
  private readonly request: DevRequest;

  constructor(
    private readonly deps: DevHandlerDeps,
    private readonly data: DevJob,
    private readonly ctx: Ctx,
    private readonly task: Task,
  ) {
    this.progress = createJobProgress(ctx.job, { stage: "preparing workspaces", round: data.round }, ctx.logger);
    const { traces, tasks } = deps.repos;
    this.traced = { traces, tasks, opencode: deps.opencode, logger: ctx.logger, progress: this.progress, statusPollMs: deps.statusPollMs };
    this.request = devRequestOf(task);
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

  async run(finished: AgentRunResult<DevReport> | undefined): Promise<unknown> {
    const { task, request } = this;
    if (task.status === "approved" && !(await this.report({ type: "dev.started" }, { patch: { branch: request.branch } }))) {
      return skipped("task moved on before the dev round started");
    }
    let workspaces: Workspace[];
    try {
      workspaces = await prepareTaskWorkspaces(this.deps.git, { id: request.workTaskId, title: task.title, repos: request.repos, branch: request.branch });
    } catch (err) {
      await this.report({ type: "run.failed", reason: withCause("could not prepare the repositories", errorMessage(err)), ...knownFailureCause(err) });
      return { status: "failed", reason: "workspace" };
    }
    if (!(await this.stillRunning())) return skipped("task moved on while its repositories were prepared");
    const pickedUp = finished ? await this.pickUp(workspaces, finished) : undefined;
    if (pickedUp) return pickedUp;

    const resume = await this.sessionToResume();
    // A fresh run starts from what was pushed (others' pushes to a PR's head included); a resumed
    // one keeps the tree its cut-off run left.
    if (!resume.dead) for (const ws of workspaces) await this.deps.git.syncToRemote(ws);
    const remote = await watchRemoteRefs(this.deps.git, workspaces);
    const run = await this.runAgent(workspaces, resume.session);
    // Only the service pushes, and only the task branch: anything else that moved fails the task.
    const moved = await remote.moved();
    if (moved.length > 0) {
      await this.report({ type: "run.failed", reason: movedRefsReason(moved), cause: "refs-moved" });
      return { status: "failed", reason: "remote-refs-moved" };
    }
    if (run.stopped) {
      await this.deliverQuietly(workspaces);
      return skipped("task stopped during the dev run; the work so far is pushed");
    }
    if (run.overBudget) return this.pauseForBudget(workspaces, run.overBudget);
    return this.settle(workspaces, run.result);
  }

  /**
   * The run passed the task's budget and was interrupted: its work is pushed and kept, and the
   * task waits for the person. Continue runs `continue` in the same session, which holds the
   * run's context.
   */
  private async pauseForBudget(workspaces: Workspace[], overBudget: RunBudget): Promise<unknown> {
    const delivered = await this.deliverUnlessRejected(workspaces);
    if ("failed" in delivered) return delivered.failed;
    this.ctx.logger.info({ ...overBudget, commit: delivered.commit }, "dev run stopped by the task's budget; its work is pushed");
    await this.report({ type: "budget.exceeded", ...overBudget, step: "continue" });
    return { status: "paused", round: this.data.round, commit: delivered.commit };
  }

  private async stillRunning(): Promise<boolean> {
    const task = await this.deps.repos.tasks.findById(this.data.taskId);
    return task?.status === "running";
  }

  /** A session that holds the task already is told to go on; a fresh one gets the whole request. */
  private async prompt(workspaces: Workspace[], resumed: boolean): Promise<string> {
    const { task, request, data } = this;
    if (data.kind === "continue" && resumed) return buildContinuePrompt(task.id, data.round);
    const findings = data.round > 1 || data.kind === "revise" ? latestFindings(await this.deps.repos.events.list(task.id)) : [];
    const plan = request.followsPlan ? await this.deps.repos.tasks.latestPlan(task.targetKey ?? "") : undefined;
    return request.prompt({ round: data.round, workspaces: workspaceLines(this.deps.git.taskDir(request.workTaskId), workspaces), findings, plan });
  }

  /** The agent run, watched: stopped when the task left `running` (cancel), or by its budget. */
  private async runAgent(workspaces: Workspace[], resume: { sessionId?: string; serverUrl?: string }): Promise<DevRun> {
    const budget = await budgetStanding(this.deps.repos, this.task.id);
    const { stoppedBy, result, overBudget } = await runWhileTaskRuns(this.traced, {
      taskId: this.task.id,
      round: this.data.round,
      storeOnTask: true,
      jobId: this.ctx.job.id,
      signal: this.ctx.signal,
      what: "dev run",
      run: {
        agent: DEV_AGENT,
        directory: this.deps.git.taskDir(this.request.workTaskId),
        prompt: await this.prompt(workspaces, resume.sessionId !== undefined),
        policy: DEV_POLICY,
        schema: devReportSchema,
        idleTimeoutMs: this.deps.idleTimeoutMs,
        hardTimeoutMs: this.deps.hardTimeoutMs,
        // A new session goes where the task's last one ran: that server has loaded the directory.
        ...(this.task.agentServerUrl ? { preferServerUrl: this.task.agentServerUrl } : {}),
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
   * attempt's (`dead`: the run was cut off, so its tree is kept); for `continue` (after a timeout,
   * a failure or a budget pause) and a revise round, the latest dev session of the task (or of
   * the implement command a PR iterate continues), which holds what the agent learnt of the code.
   * Only a first round starts afresh.
   */
  private async sessionToResume(): Promise<{ dead: boolean; session: { sessionId?: string; serverUrl?: string } }> {
    const dead = await settleDeadRuns(this.traced, this.task.id, DEV_AGENT);
    if (dead.resumeSessionId) return { dead: true, session: resumeOptions(dead.resumeSessionId, dead.resumeServerUrl) };
    const goesOn = this.data.kind === "continue" || this.data.kind === "revise";
    const from = this.request.sessionTaskId ?? (goesOn ? this.task.id : undefined);
    if (from === undefined) return { dead: false, session: {} };
    const latest = await this.deps.repos.traces.findLatest(from, DEV_AGENT);
    return { dead: false, session: resumeOptions(latest?.sessionId, latest?.serverUrl) };
  }

  private async deliver(workspaces: Workspace[]): Promise<DeliveredWork> {
    await this.progress.report({ stage: "committing and pushing" });
    return deliverWork(this.deps.git, workspaces, this.request.commit(this.data.round));
  }

  private async deliverQuietly(workspaces: Workspace[]): Promise<void> {
    await this.deliver(workspaces).catch((err: unknown) => this.ctx.logger.warn({ err }, "could not push the work of a stopped dev run"));
  }

  private async settle(workspaces: Workspace[], result: AgentRunResult<DevReport>): Promise<unknown> {
    const round = this.data.round;
    // The closing summary is a courtesy: a run that edited files but botched its JSON still counts.
    const unreadableSummary = result.outcome === "failed" && result.error instanceof VerdictValidationError;
    if ((result.outcome === "failed" && !unreadableSummary) || result.outcome === "cancelled") {
      const reason = result.error?.message ?? `run ended ${result.outcome}`;
      if (!isLastAttempt(this.ctx.job)) throw new Error(`dev run failed, will retry: ${reason}`);
      await this.deliverQuietly(workspaces);
      await this.report({ type: "run.failed", reason: withCause(`the dev agent failed in round ${round}`, reason) });
      return { status: "failed", reason };
    }
    const delivered = await this.deliverUnlessRejected(workspaces);
    return "failed" in delivered ? delivered.failed : this.conclude(result, delivered);
  }

  /**
   * A retry of a job whose run finished before its process died (after its push, say): the run's
   * answer is reused and its work delivered from the tree or found on the branch, so the model is
   * not paid twice. Undefined when that work is in neither place (another replica's tree): the
   * round then runs again.
   */
  private async pickUp(workspaces: Workspace[], finished: AgentRunResult<DevReport>): Promise<unknown> {
    const delivered = await this.deliverUnlessRejected(workspaces);
    if ("failed" in delivered) return delivered.failed;
    if (!delivered.changed && finished.outcome === "ok") {
      this.ctx.logger.warn({ sessionId: finished.sessionId }, "the finished dev run's work is neither in the tree nor on the branch; the round runs again");
      return undefined;
    }
    this.ctx.logger.info({ sessionId: finished.sessionId, commit: delivered.commit }, "picked up the dev run a dead attempt finished; the model is not run again");
    return this.conclude(finished, delivered);
  }

  private async deliverUnlessRejected(workspaces: Workspace[]): Promise<DeliveredWork | { failed: unknown }> {
    try {
      return await this.deliver(workspaces);
    } catch (err) {
      if (!(err instanceof PushRejectedError)) throw err;
      // The error names the branch, the repository and why; a summary in front would say it twice.
      await this.report({ type: "run.failed", reason: err.message, cause: "push-rejected" });
      return { failed: { status: "failed", reason: "push-rejected" } };
    }
  }

  /** What a delivered round reports: timed out, not done, nothing changed, delivered (a fix), or finished. */
  private async conclude(result: AgentRunResult<DevReport>, delivered: DeliveredWork): Promise<unknown> {
    const round = this.data.round;
    if (result.outcome === "timeout") {
      const limit = result.timeoutKind === "hard" ? "ran past its time limit" : "went quiet too long";
      await this.report({ type: "run.timed_out", reason: `the dev agent ${limit} in round ${round}` });
      return { status: "timeout", kind: result.timeoutKind, sessionId: result.sessionId, commit: delivered.commit };
    }
    if (result.verdict && !result.verdict.done) {
      await this.report({ type: "run.failed", reason: `the dev agent could not finish round ${round}: ${result.verdict.summary}` });
      return { status: "failed", reason: "not-done" };
    }
    // A later round may rightly change nothing (a finding the agent shows is wrong): the review judges it.
    if (!delivered.changed && (round === 1 || this.request.oneShot)) {
      await this.report({ type: "run.failed", reason: `the dev agent changed nothing in round ${round}` });
      return { status: "failed", reason: "nothing-changed" };
    }
    const summary = result.verdict?.summary ?? "(the agent's summary was unreadable)";
    const testsRun = result.verdict?.testsRun;
    if (this.request.oneShot) {
      const resultText = `Pushed ${delivered.commit} to \`${this.request.branch}\`: ${summary}${testsRun ? `\n\nChecks: ${testsRun}` : ""}`;
      await this.report({ type: "run.succeeded" }, { patch: { resultText } });
      return { status: "delivered", commit: delivered.commit };
    }
    // A round that passed the budget leaves its review to the person's Continue.
    const overBudget = await budgetPassed(this.deps.repos, this.data.taskId);
    await this.report({ type: "dev.finished", commit: delivered.commit, summary, ...(testsRun ? { testsRun } : {}), ...(overBudget ? { overBudget } : {}) });
    return { status: "finished", round, commit: delivered.commit };
  }
}
