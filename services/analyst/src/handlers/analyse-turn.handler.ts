import type { AnalystJob } from "@ratatoskr/contracts";
import type { DialogueTurn, Repositories, Task } from "@ratatoskr/db";
import type { AgentPolicy, AgentRunResult, OpencodeClient } from "@ratatoskr/opencode";
import { finishedRunOf, isLastAttempt, resumeOptions, runTraced, settleDeadRuns } from "@ratatoskr/pipeline";
import { PermanentError, skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import type { TaskDraft } from "../draft/draft-merge.ts";
import { interpretVerdict, settleDraft, type AnalysisOutcome } from "../outcome/analysis-outcome.ts";
import { dialogueLanguage } from "../outcome/fallback-questions.ts";
import { buildAnalystPrompt, type DialogueLine } from "../prompt/analyst-prompt.ts";
import { findMissingRepositories } from "../repositories/repository-check.ts";
import type { RepositoryDirectory } from "../repositories/repository-directory.ts";
import { classifyRunFailure, problemOfThrown } from "../run/run-failure.ts";
import { analystVerdictSchema, type AnalystVerdict } from "../verdict/analyst-verdict.schema.ts";
import { releaseFailedAnalysis, settleAnalysis, type TransitionFn } from "./settle-analysis.ts";
import { isAnalysisAlreadySettled } from "./stale-analysis.ts";

/** The analyst reads and thinks; it never edits, runs commands or fetches the web. */
export const ANALYST_POLICY: AgentPolicy = {
  permissions: { edit: "deny", bash: "deny", webfetch: "deny" },
  default: "deny",
};

export const ANALYST_AGENT = "analyst";

export interface AnalystHandlerDeps {
  repos: Pick<Repositories, "tasks" | "turns" | "traces" | "events">;
  /** Applies an event and dispatches its follow-ups (ServiceContext.transition). */
  transition: TransitionFn;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls" | "finishedTurn">;
  /** Undefined: repositories are not checked (none configured). */
  repositories: RepositoryDirectory | undefined;
  /** The directory every analyst session works in (see ensureSharedAgentDir). */
  directory: string;
  idleTimeoutMs: number;
  hardTimeoutMs: number;
  maxQuestions: number;
}

type Ctx = JobContext<"analyst">;

function draftOf(task: Task): TaskDraft {
  const { title, goal, repos, why, acceptanceCriteria } = task;
  return { title, goal, repos, why, acceptanceCriteria };
}

/** The dialogue split into what earlier analyses saw and the person's turns this one is about. */
function splitDialogue(turns: readonly DialogueTurn[]): { history: DialogueLine[]; pending: DialogueTurn[] } {
  const pending = turns.filter((turn) => turn.role === "user" && turn.analysedAt === null);
  const history = turns
    .filter((turn) => !pending.includes(turn))
    .map((turn) => ({
      role: turn.role === "user" ? ("user" as const) : ("assistant" as const),
      text: turn.text,
    }));
  return { history, pending };
}

/**
 * The `analyst` queue's handler for Telegram dialogue turns (`turn`, `force-draft`): one agent
 * run over the pending turns, then exactly one report to the state machine — asked, drafted,
 * aborted, or failed — so the task never stays `analysing`. A job back after its process died
 * reports the run its dead attempt finished over the same turns (the model is not paid twice), or
 * continues the session of one it cut off.
 */
export function createAnalyseTurnHandler(deps: AnalystHandlerDeps): JobHandler<"analyst"> {
  return async (data, ctx) => {
    if (data.kind === "plan" || data.kind === "discuss") {
      throw new PermanentError(
        `analyst: Gitea "${data.kind}" commands are not implemented yet (a later issue delivers them)`,
      );
    }
    const task = await deps.repos.tasks.findById(data.taskId);
    if (!task) return skipped(`task ${data.taskId} does not exist`);
    if (task.status !== "collecting" || !task.analysing) {
      return skipped(
        `task ${task.id} is ${task.status}${task.analysing ? "" : " and not analysing"}; nothing to analyse`,
      );
    }
    if (isAnalysisAlreadySettled(ctx.job.id, task.id, await deps.repos.events.list(task.id))) {
      return skipped(`analysis ${ctx.job.id} already reported back`);
    }
    try {
      return await analyse(deps, data, task, ctx);
    } catch (err) {
      // Whatever broke (the repository host, the database), the last attempt must release the task.
      if (isLastAttempt(ctx.job) && !ctx.signal.aborted) {
        await releaseFailedAnalysis(
          { transition: deps.transition, logger: ctx.logger, taskId: task.id, events: deps.repos.events },
          problemOfThrown(err),
        ).catch((releaseErr: unknown) =>
          ctx.logger.error({ err: releaseErr }, "could not release the failed analysis"),
        );
      }
      throw err;
    }
  };
}

async function analyse(deps: AnalystHandlerDeps, data: AnalystJob, task: Task, ctx: Ctx): Promise<unknown> {
  const forced = data.kind === "force-draft";
  const { history, pending } = splitDialogue(await deps.repos.turns.list(task.id));
  const draft = draftOf(task);
  const prompt = buildAnalystPrompt({
    taskId: task.id,
    draft,
    history,
    newMessages: pending.map((turn) => turn.text),
    maxQuestions: deps.maxQuestions,
    forced,
  });
  const finished = await finishedRunOf(deps.repos.traces, { taskId: task.id, agent: ANALYST_AGENT, jobId: ctx.job.id, schema: analystVerdictSchema, prompt }, deps.opencode);
  if (finished) ctx.logger.info({ sessionId: finished.sessionId }, "picked up the analysis a dead attempt finished; the model is not run again");
  const result = finished ?? (await runAnalysis(deps, task, prompt, ctx, { pendingTurns: pending.length, forced }));
  const target = { transition: deps.transition, logger: ctx.logger, taskId: task.id, events: deps.repos.events };

  if (result.outcome !== "ok" || result.verdict === undefined) return handleFailedRun(result, target, ctx);

  ctx.logger.info(
    { phase: result.verdict.phase, sessionId: result.sessionId, repaired: result.repaired },
    "verdict received",
  );
  const outcome = await outcomeOf(deps, result.verdict, draft, ctx);
  const settled = await settleAnalysis(
    {
      ...target,
      fedTurnIds: pending.map((turn) => turn.id),
      forced,
      language: dialogueLanguage(
        [...history, ...pending].filter((t) => t.role === "user").map((t) => t.text),
      ),
    },
    outcome,
  );
  return settled
    ? { status: "analysed", outcome: outcome.kind }
    : skipped("task moved on during the analysis");
}

/** The analyst's run over the prompt, in the session of a run its dead attempt cut off if there is one. */
async function runAnalysis(
  deps: AnalystHandlerDeps,
  task: Task,
  prompt: string,
  ctx: Ctx,
  facts: { pendingTurns: number; forced: boolean },
): Promise<AgentRunResult<AnalystVerdict>> {
  const traced = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger };
  // An attempt whose process died left its run unfinished and its session perhaps still working:
  // that session is interrupted and continued, so one analysis never has two live sessions.
  const { resumeSessionId, resumeServerUrl } = await settleDeadRuns(traced, task.id, ANALYST_AGENT);
  ctx.logger.info({ ...facts, resumeSessionId, resumeServerUrl }, "analysis started");
  return runTraced(traced, {
    taskId: task.id,
    round: null,
    storeOnTask: false,
    jobId: ctx.job.id,
    run: {
      agent: ANALYST_AGENT,
      directory: deps.directory,
      prompt,
      policy: ANALYST_POLICY,
      schema: analystVerdictSchema,
      idleTimeoutMs: deps.idleTimeoutMs,
      hardTimeoutMs: deps.hardTimeoutMs,
      signal: ctx.signal,
      ...resumeOptions(resumeSessionId, resumeServerUrl),
    },
  });
}

async function outcomeOf(
  deps: AnalystHandlerDeps,
  verdict: AnalystVerdict,
  draft: TaskDraft,
  ctx: Ctx,
): Promise<AnalysisOutcome> {
  const meaning = interpretVerdict(verdict, draft, deps.maxQuestions);
  if (meaning.kind !== "draft") return meaning;
  const missing = await findMissingRepositories(deps.repositories, meaning.repos, ctx.signal);
  if (missing.length > 0) ctx.logger.info({ missing }, "draft names repositories that do not exist");
  return settleDraft(meaning, missing);
}

async function handleFailedRun(
  result: AgentRunResult<AnalystVerdict>,
  target: Parameters<typeof releaseFailedAnalysis>[0],
  ctx: Ctx,
): Promise<unknown> {
  const failure = classifyRunFailure(result);
  const reason = result.error?.message ?? `run ended ${result.outcome}`;
  if (failure.action === "interrupted") throw new Error(`analysis interrupted: ${reason}`);
  if (failure.action === "retry" && !isLastAttempt(ctx.job))
    throw new Error(`analysis run failed, will retry: ${reason}`);
  ctx.logger.warn(
    { outcome: result.outcome, problem: failure.problem, sessionId: result.sessionId, error: reason },
    "analysis produced no usable verdict",
  );
  const released = await releaseFailedAnalysis(target, failure.problem);
  return released
    ? { status: "failed-analysis", problem: failure.problem }
    : skipped("task moved on during the analysis");
}
