import { reviewFindingSchema, type AnalystJob, type ReviewFinding, type TaskEvent } from "@ratatoskr/contracts";
import type { ApplyTransitionOptions, Repositories, Task } from "@ratatoskr/db";
import { readOnlyBreachReason, watchTrees, type GitWorkspaces } from "@ratatoskr/git";
import { runCommandJob, type HeartbeatRedis } from "@ratatoskr/gitea";
import type { AgentPolicy, AgentRunResult, OpencodeClient } from "@ratatoskr/opencode";
import {
  finishedRunOf,
  loadStepTask,
  reportUnlessMovedOn,
  resumeOptions,
  runWhileTaskRuns,
  settleDeadRuns,
  workspaceLines,
  type StoredEvent,
} from "@ratatoskr/pipeline";
import { skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { z } from "zod";
import { buildPlannerPrompt, plannerVerdictSchema, type PlannerVerdict } from "./planner-prompt.ts";

export const PLANNER_AGENT = "planner";

/** Reads the repository; writes nothing, runs nothing (agents/planner.md says the same to opencode). */
export const PLANNER_POLICY: AgentPolicy = {
  permissions: { read: "allow", glob: "allow", grep: "allow", list: "allow" },
  default: "deny",
};

const SETTLED_BY = ["plan.drafted", "answer.drafted", "run.succeeded", "run.failed", "user.cancelled"] as const;

export interface GiteaPlanDeps {
  repos: Pick<Repositories, "tasks" | "traces" | "events">;
  transition(taskId: number, event: TaskEvent, options?: ApplyTransitionOptions): Promise<unknown>;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls" | "finishedTurn">;
  git: GitWorkspaces;
  redis: HeartbeatRedis;
  prefix: string;
  idleTimeoutMs: number;
  hardTimeoutMs: number;
  statusPollMs: number;
}

type Ctx = JobContext<"analyst">;
type Report = (event: TaskEvent, failureReason?: string) => Promise<unknown>;

const drafted = z.object({ plan: z.string() });
const rejected = z.object({ findings: z.array(reviewFindingSchema) });

function latest<T>(events: readonly StoredEvent[], type: string, schema: z.ZodType<T>): T | undefined {
  const parsed = schema.safeParse(events.filter((e) => e.type === type).at(-1)?.payload);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The `analyst` queue for Gitea commands (G3): the planner agent writes the plan of `/agent plan`,
 * revises it for an issue's `/agent iterate` and for each rejected plan review, or answers
 * `/agent discuss` about the current plan. It reads the repository on the default branch. A job
 * back after its process died reports the run its dead attempt finished (the model is not paid
 * twice); a turn that was cut off is not replayed (G6).
 */
export function createGiteaPlanHandler(deps: GiteaPlanDeps): JobHandler<"analyst"> {
  return async (data, ctx) => {
    const found = await loadStepTask(deps.repos, data.taskId, ctx.job.id, { step: "planner job", settledBy: SETTLED_BY });
    if ("skip" in found) return skipped(found.skip);
    const { task, events } = found;
    const report = (event: TaskEvent, failureReason?: string) =>
      reportUnlessMovedOn(
        () => deps.transition(task.id, event, failureReason ? { patch: { failureReason } } : undefined),
        ctx.logger,
        "command moved on during the planner run; its report is dropped",
      );
    return runCommandJob(
      {
        redis: deps.redis,
        prefix: deps.prefix,
        taskId: task.id,
        jobId: ctx.job.id ?? `${task.id}-analyst-${task.round}`,
        signal: ctx.signal,
        what: `the planner run of round ${task.round}`,
        settleDeadRuns: () =>
          settleDeadRuns({ traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger }, task.id, PLANNER_AGENT),
        fail: (reason) => report({ type: "run.failed", reason }),
        pickUp: async () => {
          const finished = await finishedRunOf(deps.repos.traces, { taskId: task.id, agent: PLANNER_AGENT, jobId: ctx.job.id, schema: plannerVerdictSchema }, deps.opencode);
          if (!finished) return undefined;
          ctx.logger.info({ sessionId: finished.sessionId }, "picked up the planner run a dead attempt finished; the model is not run again");
          return conclude(data, task, finished, report);
        },
      },
      () => plan(deps, data, ctx, task, events, report),
    );
  };
}

async function plan(
  deps: GiteaPlanDeps,
  data: AnalystJob,
  ctx: Ctx,
  task: Task,
  events: readonly StoredEvent[],
  report: Report,
): Promise<unknown> {
  const ws = await deps.git.prepare({ taskId: task.id, repo: task.repos[0] ?? "", branch: `agent/plan-${task.id}` });
  const findings: ReviewFinding[] = task.round > 1 ? (latest(events, "review.rejected", rejected)?.findings ?? []) : [];
  const ownPlan = latest(events, "plan.drafted", drafted)?.plan;
  const currentPlan = ownPlan ?? (await deps.repos.tasks.latestPlan(task.targetKey ?? ""));
  const prompt = buildPlannerPrompt({
    taskId: task.id,
    command: task.commandKind ?? "plan",
    target: `${task.repoOwner}/${task.repoName}#${task.targetNumber}`,
    requester: task.requesterLogin ?? "?",
    round: task.round,
    maxRounds: task.maxRounds,
    title: task.title,
    body: task.goal,
    message: task.commandMessage,
    currentPlan,
    findings,
    workspace: workspaceLines(deps.git.taskDir(task.id), [ws])[0] ?? ".",
  });
  const traced = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger };
  const dead = await settleDeadRuns(traced, task.id, PLANNER_AGENT);
  // A revision round continues the planner's own conversation with the reviewer's findings.
  const earlier = !dead.resumeSessionId && task.round > 1 ? await deps.repos.traces.findLatest(task.id, PLANNER_AGENT) : null;
  const resume = dead.resumeSessionId ? resumeOptions(dead.resumeSessionId, dead.resumeServerUrl) : resumeOptions(earlier?.sessionId, earlier?.serverUrl);
  const trees = await watchTrees(deps.git, [ws]);
  const { stoppedBy, result } = await runWhileTaskRuns(
    { ...traced, statusPollMs: deps.statusPollMs },
    {
      taskId: task.id,
      round: task.round,
      storeOnTask: true,
      jobId: ctx.job.id,
      signal: ctx.signal,
      what: "planner run",
      run: {
        agent: PLANNER_AGENT,
        directory: deps.git.taskDir(task.id),
        prompt,
        policy: PLANNER_POLICY,
        schema: plannerVerdictSchema,
        idleTimeoutMs: deps.idleTimeoutMs,
        hardTimeoutMs: deps.hardTimeoutMs,
        ...resume,
      },
    },
  );
  if (stoppedBy) return skipped(`command ${stoppedBy} during the planner run`);
  const touched = await trees.changed();
  if (touched.length > 0) {
    await report({ type: "run.failed", reason: readOnlyBreachReason(PLANNER_AGENT, touched) });
    return { status: "failed", reason: "read-only-breach" };
  }
  return conclude(data, task, result, report);
}

/** What a finished planner run reports: its plan, its answer, or why it has none. */
async function conclude(data: AnalystJob, task: Task, result: AgentRunResult<PlannerVerdict>, report: Report): Promise<unknown> {
  if (result.outcome !== "ok" || !result.verdict) {
    await report({ type: "run.failed", reason: `the planner ${result.outcome === "timeout" ? "timed out" : "failed"}: ${result.error?.message ?? result.outcome}` });
    return { status: "failed", reason: result.outcome };
  }
  if (data.kind === "discuss") {
    const answer = result.verdict.reply.trim() || result.verdict.plan.trim();
    await report({ type: "answer.drafted", answer });
    return { status: "answered" };
  }
  await report({ type: "plan.drafted", plan: result.verdict.plan.trim() });
  return { status: "drafted", round: task.round };
}
