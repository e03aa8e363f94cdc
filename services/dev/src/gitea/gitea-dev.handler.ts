import { reviewFindingSchema, type DevJob, type ReviewFinding, type TaskEvent } from "@ratatoskr/contracts";
import type { ApplyTransitionOptions, Task } from "@ratatoskr/db";
import type { Workspace } from "@ratatoskr/git";
import { runCommandJob, type HeartbeatRedis } from "@ratatoskr/gitea";
import { VerdictValidationError } from "@ratatoskr/opencode";
import { loadStepTask, reportUnlessMovedOn, runWhileTaskRuns, settleDeadRuns, workspaceLines, type StoredEvent } from "@ratatoskr/pipeline";
import { skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { z } from "zod";
import { DEV_AGENT, DEV_POLICY, type DevHandlerDeps } from "../handlers/dev-round.handler.ts";
import { devReportSchema } from "../prompt/dev-report.schema.ts";
import { buildGiteaDevPrompt } from "./gitea-dev-prompt.ts";

const SETTLED_BY = ["command.dev-finished", "command.succeeded", "command.failed", "command.cancelled", "command.interrupted"] as const;

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
 * as `agent: <title>` and pushed without force only when the agent finished; a cancelled run
 * leaves it unpushed (G7). One job runs one agent turn once: a job that began before and comes
 * back (its process died) fails the command instead of replaying the turn (G6).
 */
export function createGiteaDevHandler(deps: GiteaDevDeps): JobHandler<"dev"> {
  return async (data, ctx) => {
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, { step: "dev job", settledBy: SETTLED_BY, round: data.round });
    if ("skip" in found) return skipped(found.skip);
    const { task, events } = found;
    const report = reporter(deps, task.id, ctx);
    return runCommandJob(
      {
        redis: deps.redis,
        prefix: deps.prefix,
        taskId: task.id,
        jobId: ctx.job.id ?? `${task.id}-dev-${data.round}`,
        signal: ctx.signal,
        what: `the dev run of round ${data.round}`,
        settleDeadRuns: () =>
          settleDeadRuns({ traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger }, task.id, DEV_AGENT),
        fail: (reason) => report({ type: "command.failed", reason: "error" }, reason),
      },
      () => runRound(deps, data, ctx, task, latestRejection(events), report),
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

async function runRound(deps: GiteaDevDeps, data: DevJob, ctx: Ctx, task: Task, findings: ReviewFinding[], report: Report): Promise<unknown> {
  const origin = originOf(task);
  // A PR iterate works in the implement command's own tree, where its resumed session works.
  const workTaskId = origin ?? task.id;
  const ws: Workspace = await deps.git.prepare({ taskId: workTaskId, repo: task.repos[0] ?? "", branch: task.branch ?? "" });
  // Start from what was pushed: a cancelled run's partial work never rides along, others' pushes do.
  await deps.git.syncToRemote(ws);
  const traced = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger };
  const { resumeSessionId } = await settleDeadRuns(traced, task.id, DEV_AGENT);
  const earlier = origin ?? (data.kind === "revise" ? task.id : undefined);
  const sessionId = resumeSessionId ?? (earlier ? (await deps.repos.traces.findLatest(earlier, DEV_AGENT))?.sessionId ?? undefined : undefined);
  const plan = task.commandKind === "implement" ? await deps.repos.tasks.latestPlan(task.targetKey ?? "") : undefined;
  const sign = task.targetType === "pr" ? "!" : "#";
  const prompt = buildGiteaDevPrompt({
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
    workspaces: workspaceLines(deps.git.taskDir(workTaskId), [ws]),
    findings,
  });
  const { stoppedBy, result } = await runWhileTaskRuns(
    { ...traced, statusPollMs: deps.statusPollMs },
    {
      taskId: task.id,
      round: data.round,
      storeOnTask: true,
      signal: ctx.signal,
      what: "dev run",
      run: {
        agent: DEV_AGENT,
        directory: deps.git.taskDir(workTaskId),
        prompt,
        policy: DEV_POLICY,
        schema: devReportSchema,
        idleTimeoutMs: deps.idleTimeoutMs,
        hardTimeoutMs: deps.hardTimeoutMs,
        ...(sessionId ? { sessionId } : {}),
      },
    },
  );
  if (stoppedBy) return skipped(`command ${stoppedBy} during the dev run; its work stays unpushed`);
  const unreadable = result.outcome === "failed" && result.error instanceof VerdictValidationError;
  if (result.outcome !== "ok" && !unreadable) {
    await report({ type: "command.failed", reason: result.outcome }, `the dev agent ${result.outcome === "timeout" ? "timed out" : "failed"} in round ${data.round}: ${result.error?.message ?? result.outcome}`);
    return { status: "failed", reason: result.outcome };
  }
  if (result.verdict && !result.verdict.done) {
    await report({ type: "command.failed", reason: "not-done" }, `the dev agent could not finish: ${result.verdict.summary}`);
    return { status: "failed", reason: "not-done" };
  }
  const title = task.title ?? `command ${task.id}`;
  const sha = await deps.git.commitAll(ws, task.commandKind === "fix" ? `agent: fix ${title}` : `agent: ${title}`);
  if (sha === null && (data.round === 1 || task.commandKind === "fix")) {
    await report({ type: "command.failed", reason: "nothing-changed" }, `the dev agent changed no file in round ${data.round}`);
    return { status: "failed", reason: "nothing-changed" };
  }
  const pushed = await deps.git.push(ws);
  const commit = pushed.sha.slice(0, 7);
  const summary = result.verdict?.summary ?? "(the agent's summary was unreadable)";
  if (task.commandKind === "fix") {
    await report({ type: "command.succeeded" }, undefined, { resultText: `Pushed ${commit} to \`${ws.branch}\`: ${summary}${result.verdict?.testsRun ? `\n\nChecks: ${result.verdict.testsRun}` : ""}` });
    return { status: "succeeded", commit };
  }
  await report({ type: "command.dev-finished", commit, summary, ...(result.verdict?.testsRun ? { testsRun: result.verdict.testsRun } : {}) });
  return { status: "finished", round: data.round, commit };
}
