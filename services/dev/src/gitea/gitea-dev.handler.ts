import { reviewFindingSchema, withCause, type DevJob, type ReviewFinding, type TaskEvent } from "@ratatoskr/contracts";
import { budgetStanding, type ApplyTransitionOptions, type Task } from "@ratatoskr/db";
import { movedRefsReason, roundTrailer, watchRemoteRefs, type Workspace } from "@ratatoskr/git";
import { runCommandJob, type HeartbeatRedis } from "@ratatoskr/gitea";
import { VerdictValidationError, type AgentRunResult } from "@ratatoskr/opencode";
import {
  finishedRunOf,
  loadStepTask,
  overBudgetRefusal,
  reportUnlessMovedOn,
  resumeOptions,
  runWhileTaskRuns,
  settleDeadRuns,
  workspaceLines,
  type RunBudget,
  type StoredEvent,
} from "@ratatoskr/pipeline";
import { createJobProgress, skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { z } from "zod";
import { DEV_AGENT, DEV_POLICY, type DevHandlerDeps } from "../handlers/dev-round.handler.ts";
import { devReportSchema, type DevReport } from "../prompt/dev-report.schema.ts";
import { deliverWork } from "../work/deliver-work.ts";
import { buildContinuePrompt } from "../prompt/dev-prompt.ts";
import { buildGiteaDevPrompt } from "./gitea-dev-prompt.ts";

const SETTLED_BY = [
  "command.dev-finished",
  "command.succeeded",
  "command.failed",
  "command.cancelled",
  "command.interrupted",
  "run.timed_out",
] as const;

export interface GiteaDevDeps extends DevHandlerDeps {
  repos: DevHandlerDeps["repos"] & { tasks: DevHandlerDeps["repos"]["tasks"] & { latestPlan(targetKey: string): Promise<string | undefined> } };
  redis: HeartbeatRedis;
  /** Queue prefix: the run heartbeat intake watches lives under it (G6). */
  prefix: string;
}

type Ctx = JobContext<"dev">;

const rejected = z.object({ findings: z.array(reviewFindingSchema) });

function latestRejection(events: readonly StoredEvent[]): ReviewFinding[] {
  const parsed = rejected.safeParse(events.filter((e) => e.type === "command.review-rejected").at(-1)?.payload);
  return parsed.success ? parsed.data.findings : [];
}

/** `agent/issue-<N>-<taskId>` → the implement command whose working tree and sessions a PR iterate continues. */
function originOf(task: Task): number | undefined {
  const match = /^agent\/issue-\d+-(\d+)$/.exec(task.branch ?? "");
  return task.commandKind === "iterate" && task.targetType === "pr" && match ? Number(match[1]) : undefined;
}

/**
 * The `dev` queue for Gitea commands (G3): `implement` and its revise rounds, `fix` (one shot,
 * one commit), and an agent PR's `iterate` (resumes the PR's dev session). The work is committed
 * as `agent: <title>` and pushed without force when the agent finished, timed out (P4) or passed
 * the budget (P5); a cancelled run leaves it unpushed (G7). One job runs one agent turn once: a
 * job that comes back (its process died) goes on from a run its dead attempt finished — its
 * answer reused, its work committed or found already pushed — and otherwise fails the command
 * instead of replaying the turn (G6).
 */
export function createGiteaDevHandler(deps: GiteaDevDeps): JobHandler<"dev"> {
  return async (data, ctx) => {
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, { step: "dev job", settledBy: SETTLED_BY, round: data.round });
    if ("skip" in found) return skipped(found.skip);
    const { task, events } = found;
    const round = new GiteaDevRound(deps, data, ctx, task, reporter(deps, task.id, ctx));
    const jobId = ctx.job.id ?? `${task.id}-dev-${data.round}`;
    return runCommandJob(
      {
        redis: deps.redis,
        prefix: deps.prefix,
        taskId: task.id,
        jobId,
        signal: ctx.signal,
        what: `the dev run of round ${data.round}`,
        settleDeadRuns: () =>
          settleDeadRuns({ traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger }, task.id, DEV_AGENT),
        fail: (reason) => round.report({ type: "command.failed", reason: "error" }, reason),
        pickUp: async () => {
          const finished = await finishedRunOf(deps.repos.traces, { taskId: task.id, agent: DEV_AGENT, jobId, schema: devReportSchema });
          return finished ? round.pickUp(finished) : undefined;
        },
      },
      () => round.run(latestRejection(events)),
    );
  };
}

type Report = (event: TaskEvent, failureReason?: string, patch?: ApplyTransitionOptions["patch"]) => Promise<boolean>;

function reporter(deps: GiteaDevDeps, taskId: number, ctx: Ctx): Report {
  return (event, failureReason, patch) =>
    reportUnlessMovedOn(
      () => deps.transition(taskId, event, { patch: { ...patch, ...(failureReason ? { failureReason } : {}) } }),
      ctx.logger,
      "command moved on during the dev round; the report is dropped",
    );
}

class GiteaDevRound {
  /** An agent PR's iterate works in the implement command's own tree, where its resumed session works. */
  private readonly origin: number | undefined;
  private readonly workTaskId: number;

  constructor(
    private readonly deps: GiteaDevDeps,
    private readonly data: DevJob,
    private readonly ctx: Ctx,
    private readonly task: Task,
    readonly report: Report,
  ) {
    this.origin = originOf(task);
    this.workTaskId = this.origin ?? task.id;
  }

  private prepare(): Promise<Workspace> {
    return this.deps.git.prepare({ taskId: this.workTaskId, repo: this.task.repos[0] ?? "", branch: this.task.branch ?? "" });
  }

  async run(findings: ReviewFinding[]): Promise<unknown> {
    // P5 as on every door: past its budget the command pauses before the run.
    const overBudget = await overBudgetRefusal(this.deps, this.task.id, this.data.kind);
    if (overBudget) return skipped(overBudget);
    const ws = await this.prepare();
    // Start from what was pushed: a cancelled run's partial work never rides along, others' pushes do.
    await this.deps.git.syncToRemote(ws);
    const remote = await watchRemoteRefs(this.deps.git, [ws]);
    const { stoppedBy, result, overBudget: passed } = await this.runAgent(ws, findings);
    // Only the service pushes, and only the task branch: anything else that moved fails the command.
    const moved = await remote.moved();
    if (moved.length > 0) {
      await this.report({ type: "command.failed", reason: "error" }, movedRefsReason(moved));
      return { status: "failed", reason: "remote-refs-moved" };
    }
    if (stoppedBy) return skipped(`command ${stoppedBy} during the dev run; its work stays unpushed`);
    if (passed) return this.pauseForBudget(ws, passed);
    return this.settle(ws, result, false);
  }

  /**
   * The run passed the command's budget and was interrupted: unlike a cancel, its work is
   * committed and pushed, and `/agent continue` goes on in the same session.
   */
  private async pauseForBudget(ws: Workspace, passed: RunBudget): Promise<unknown> {
    const delivered = await deliverWork(this.deps.git, [ws], this.commitMessage());
    this.ctx.logger.info({ ...passed, commit: delivered.commit }, "dev run stopped by the command's budget; its work is pushed");
    await this.report({ type: "budget.exceeded", ...passed, step: "continue" });
    return { status: "paused", round: this.data.round, commit: delivered.commit };
  }

  /**
   * P4 as on every door: the run went idle or ran past its limit. What it did is committed and
   * pushed, its session kept, and `/agent continue` resumes it in this round.
   */
  private async timedOut(ws: Workspace, result: AgentRunResult<DevReport>): Promise<unknown> {
    const delivered = await deliverWork(this.deps.git, [ws], this.commitMessage());
    this.ctx.logger.info({ kind: result.timeoutKind, sessionId: result.sessionId, commit: delivered.commit }, "dev run timed out; its work is pushed");
    const reason = `the dev agent ${result.timeoutKind === "hard" ? "ran past its time limit" : "went quiet too long"} in round ${this.data.round}`;
    await this.report({ type: "run.timed_out" }, reason);
    return { status: "timeout", kind: result.timeoutKind, commit: delivered.commit };
  }

  private commitMessage(): { message: string; trailer: string } {
    const title = this.task.title ?? `command ${this.task.id}`;
    const trailer = roundTrailer({ taskId: this.task.id, round: this.data.round, noun: "command" });
    const subject = this.task.commandKind === "fix" ? `agent: fix ${title}` : `agent: ${title}`;
    return { message: `${subject}\n\n${trailer}`, trailer };
  }

  /**
   * A replay whose dead attempt finished its run (and perhaps pushed): the run's answer is reused
   * and its work taken from the tree (never reset here) or found on the branch. Undefined when
   * the work is in neither place: then the replay fails as a cut-off turn.
   */
  async pickUp(finished: AgentRunResult<DevReport>): Promise<unknown> {
    const ws = await this.prepare();
    this.ctx.logger.info({ sessionId: finished.sessionId }, "a dead attempt finished its dev run; going on from it without running the agent again");
    return this.settle(ws, finished, true);
  }

  private async runAgent(ws: Workspace, findings: ReviewFinding[]) {
    const { deps, data, task, ctx } = this;
    const traced = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger };
    const dead = await settleDeadRuns(traced, task.id, DEV_AGENT);
    // A revise round and a continue (after a budget pause) go on in the command's dev session.
    const earlier = this.origin ?? (data.kind === "revise" || data.kind === "continue" ? task.id : undefined);
    const latest = !dead.resumeSessionId && earlier ? await deps.repos.traces.findLatest(earlier, DEV_AGENT) : null;
    const resume = dead.resumeSessionId ? resumeOptions(dead.resumeSessionId, dead.resumeServerUrl) : resumeOptions(latest?.sessionId, latest?.serverUrl);
    const plan = task.commandKind === "implement" ? await deps.repos.tasks.latestPlan(task.targetKey ?? "") : undefined;
    const sign = task.targetType === "pr" ? "!" : "#";
    const budget = await budgetStanding(deps.repos, task.id);
    // Continuing a session: it holds the command's text already; a fresh one needs all of it.
    const prompt = data.kind === "continue" && resume.sessionId ? buildContinuePrompt(task.id, data.round) : buildGiteaDevPrompt({
      taskId: task.id,
      command: task.commandKind ?? "implement",
      target: `${task.repoOwner}/${task.repoName}${sign}${task.targetNumber}`,
      round: data.round,
      maxRounds: task.commandKind === "fix" ? 1 : task.maxRounds,
      requester: task.requesterLogin ?? "?",
      title: task.title,
      body: task.goal,
      message: task.commandMessage,
      plan,
      workspaces: workspaceLines(deps.git.taskDir(this.workTaskId), [ws]),
      findings,
    });
    // Live progress for Bull Board, and the samples the budget watches the run's spend by.
    const progress = createJobProgress(ctx.job, { stage: "dev agent", round: data.round }, ctx.logger);
    return runWhileTaskRuns(
      { ...traced, progress, statusPollMs: deps.statusPollMs },
      {
        taskId: task.id,
        round: data.round,
        storeOnTask: true,
        jobId: ctx.job.id,
        signal: ctx.signal,
        what: "dev run",
        run: {
          agent: DEV_AGENT,
          directory: deps.git.taskDir(this.workTaskId),
          prompt,
          policy: DEV_POLICY,
          schema: devReportSchema,
          idleTimeoutMs: deps.idleTimeoutMs,
          hardTimeoutMs: deps.hardTimeoutMs,
          ...resume,
        },
        budget,
      },
    );
  }

  private async settle(ws: Workspace, result: AgentRunResult<DevReport>, pickedUp: boolean): Promise<unknown> {
    const { data, task } = this;
    if (result.outcome === "timeout") return this.timedOut(ws, result);
    const unreadable = result.outcome === "failed" && result.error instanceof VerdictValidationError;
    if (result.outcome !== "ok" && !unreadable) {
      await this.report({ type: "command.failed", reason: result.outcome }, withCause(`the dev agent failed in round ${data.round}`, result.error?.message ?? result.outcome));
      return { status: "failed", reason: result.outcome };
    }
    if (result.verdict && !result.verdict.done) {
      await this.report({ type: "command.failed", reason: "not-done" }, `the dev agent could not finish: ${result.verdict.summary}`);
      return { status: "failed", reason: "not-done" };
    }
    const delivered = await deliverWork(this.deps.git, [ws], this.commitMessage());
    // A picked-up run whose work is gone (another replica's tree) is not this round's work.
    if (pickedUp && !delivered.changed) return undefined;
    if (!delivered.changed && (data.round === 1 || task.commandKind === "fix")) {
      await this.report({ type: "command.failed", reason: "nothing-changed" }, `the dev agent changed no file in round ${data.round}`);
      return { status: "failed", reason: "nothing-changed" };
    }
    const commit = delivered.commit;
    const summary = result.verdict?.summary ?? "(the agent's summary was unreadable)";
    if (task.commandKind === "fix") {
      await this.report({ type: "command.succeeded" }, undefined, { resultText: `Pushed ${commit} to \`${ws.branch}\`: ${summary}${result.verdict?.testsRun ? `\n\nChecks: ${result.verdict.testsRun}` : ""}` });
      return { status: "succeeded", commit };
    }
    await this.report({ type: "command.dev-finished", commit, summary, ...(result.verdict?.testsRun ? { testsRun: result.verdict.testsRun } : {}) });
    return { status: "finished", round: data.round, commit };
  }
}
