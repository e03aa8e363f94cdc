import type { JobRequest, QueueName } from "@ratatoskr/contracts";
import { sourceOf, type Repositories, type Task } from "@ratatoskr/db";
import type { AgentPolicy, AgentRunResult, OpencodeClient } from "@ratatoskr/opencode";
import { errorMessage, finishedRunOf, isLastAttempt, runTraced, settleDeadRuns, type TracedRunDeps } from "@ratatoskr/pipeline";
import { skipped, type JobContext, type JobHandler } from "@ratatoskr/runtime";
import { sendNotice, POSTMORTEM_TEMPLATES, type PostmortemNotice } from "../notify/postmortem-notice.ts";
import { buildPostmortemPrompt } from "../prompt/postmortem-prompt.ts";
import { noticeOf, postmortemVerdictSchema, type PostmortemVerdict } from "../verdict/postmortem-verdict.schema.ts";
import { failureReason, findFailureEvent } from "./failure-event.ts";
import { knownCauseNotice, knownCauseOf } from "./known-cause.ts";

export const POSTMORTEM_AGENT = "postmortem";

/** The postmortem reads what it is given; it never edits, runs commands or fetches the web. */
export const POSTMORTEM_POLICY: AgentPolicy = {
  permissions: { edit: "deny", bash: "deny", webfetch: "deny" },
  default: "deny",
};

export interface PostmortemHandlerDeps {
  repos: Pick<Repositories, "tasks" | "traces" | "events" | "notifications">;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls" | "finishedTurn">;
  enqueue: (request: JobRequest<QueueName>) => Promise<unknown>;
  /** The shared directory every postmortem session works in (see ensureSharedAgentDir). */
  directory: string;
  traceBudgetChars: number;
  idleTimeoutMs: number;
  hardTimeoutMs: number;
}

type Ctx = JobContext<"postmortem">;
type Failure = { cause: "failed" | "timeout"; reason: string | null };

/** Thrown when opencode could not even start the run: worth another attempt before giving up. */
class RunNotStartedError extends Error {
  override readonly name = "RunNotStartedError";
}

/**
 * The `postmortem` queue's handler (P6): after a task failed or timed out, the postmortem agent
 * reads its runs and the person gets "why it happened / what to do" — or, when the agent cannot
 * answer, a short "postmortem unavailable". It never changes the task. One message per failure,
 * and only while the task is still at that failure (a task continued meanwhile gets its newest
 * failure explained, not an older one): a redelivered job finds the message already stored and
 * does nothing, and one whose dead attempt
 * finished its run (and died before storing the message) sends that run's answer: the model is
 * not paid twice.
 */
export function createExplainFailureHandler(deps: PostmortemHandlerDeps): JobHandler<"postmortem"> {
  return async (data, ctx) => {
    const task = await deps.repos.tasks.findById(data.taskId);
    if (!task) return skipped(`task ${data.taskId} does not exist`);
    const failure = findFailureEvent(await deps.repos.events.list(task.id), data.cause, ctx.job.id, task.id);
    if (!failure) return skipped(`task ${task.id} never became ${data.cause}`);
    const sent = await deps.repos.notifications.findForTaskSince(task.id, POSTMORTEM_TEMPLATES, failure.createdAt);
    if (sent) return skipped(`the postmortem of task ${task.id} (${data.cause}, version ${failure.version}) was already sent`);

    const traced: TracedRunDeps = { traces: deps.repos.traces, tasks: deps.repos.tasks, opencode: deps.opencode, logger: ctx.logger };
    // A cause known for certain is explained plainly: no model run, nothing to pay for.
    const known = data.cause === "failed" ? knownCauseOf(failure.payload) : undefined;
    const language = task.locale === "ru" ? "ru" : "en";
    const notice = known
      ? knownCauseNotice(task.id, known, language, sourceOf(task))
      : await explainOrSayUnavailable(deps, traced, task, { cause: data.cause, reason: failureReason(failure) ?? task.failureReason }, ctx);
    // Only while the task is still at this failure: one continued (and failed again) meanwhile waits on the newer one's postmortem.
    const sentId = await sendNotice({ repos: deps.repos, enqueue: deps.enqueue, logger: ctx.logger }, task, notice, failure.createdAt, failure.version);
    if (sentId === null) return skipped(`the postmortem of task ${task.id} (${data.cause}) was sent meanwhile, or the task moved on past this failure`);
    ctx.logger.info({ taskId: task.id, cause: data.cause, template: notice.template }, "postmortem sent");
    return { sent: notice.template };
  };
}

/** The agent's explanation, or "postmortem unavailable" with why; throws only to be retried. */
async function explainOrSayUnavailable(
  deps: PostmortemHandlerDeps,
  traced: TracedRunDeps,
  task: Task,
  failure: Failure,
  ctx: Ctx,
): Promise<PostmortemNotice> {
  try {
    const finished = await finishedRunOf(deps.repos.traces, { taskId: task.id, agent: POSTMORTEM_AGENT, jobId: ctx.job.id, schema: postmortemVerdictSchema }, deps.opencode);
    if (finished) ctx.logger.info({ sessionId: finished.sessionId }, "picked up the postmortem run a dead attempt finished; the model is not run again");
    else await settleDeadRuns(traced, task.id, POSTMORTEM_AGENT);
    return explanation(task, failure, finished ?? (await runPostmortem(deps, traced, task, failure, ctx)));
  } catch (err) {
    if (ctx.signal.aborted) throw err; // shutting down: the job goes back to the queue
    if (err instanceof RunNotStartedError && !isLastAttempt(ctx.job)) throw err;
    ctx.logger.error({ err, taskId: task.id, cause: failure.cause }, "postmortem unavailable");
    return { template: "task.postmortem-unavailable", params: { taskId: task.id, reason: `the postmortem agent failed: ${errorMessage(err)}`.slice(0, 500) } };
  }
}

/** The postmortem agent's run over the task's runs; throws {@link RunNotStartedError} when opencode could not start it. */
async function runPostmortem(
  deps: PostmortemHandlerDeps,
  traced: TracedRunDeps,
  task: Task,
  failure: Failure,
  ctx: Ctx,
): Promise<AgentRunResult<PostmortemVerdict>> {
  const traces = (await deps.repos.traces.list(task.id)).filter((trace) => trace.agent !== POSTMORTEM_AGENT);
  const prompt = buildPostmortemPrompt({
    taskId: task.id,
    cause: failure.cause,
    reason: failure.reason,
    task: requestOf(task),
    traces,
    traceBudgetChars: deps.traceBudgetChars,
    language: task.locale === "ru" ? "ru" : "en",
    source: sourceOf(task),
  });
  let result;
  try {
    result = await runTraced(traced, {
      taskId: task.id,
      round: null,
      storeOnTask: false,
      jobId: ctx.job.id,
      run: {
        agent: POSTMORTEM_AGENT,
        directory: deps.directory,
        prompt,
        policy: POSTMORTEM_POLICY,
        schema: postmortemVerdictSchema,
        idleTimeoutMs: deps.idleTimeoutMs,
        hardTimeoutMs: deps.hardTimeoutMs,
        signal: ctx.signal,
      },
    });
  } catch (err) {
    throw new RunNotStartedError(`the postmortem run could not start: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (result.outcome === "failed" && result.sessionId === undefined) {
    // No session was ever made: opencode is down or refusing, not the agent failing.
    throw new RunNotStartedError(`the postmortem run could not start: ${result.error?.message ?? "no session"}`, { cause: result.error });
  }
  return result;
}

/** The message a finished postmortem run makes; throws when it has no usable answer. */
function explanation(task: Task, failure: Failure, result: AgentRunResult<PostmortemVerdict>): PostmortemNotice {
  if (result.outcome !== "ok" || result.verdict === undefined) {
    throw new Error(`the postmortem run ended ${result.outcome}: ${result.error?.message ?? "no usable answer"}`);
  }
  return { template: "task.postmortem", params: { taskId: task.id, cause: failure.cause, ...noticeOf(result.verdict) } };
}

/** What the person asked for: a Telegram task's approved draft, or a Gitea command on its issue/PR. */
function requestOf(task: Task) {
  const { title, goal, repos, acceptanceCriteria, round, maxRounds, branch } = task;
  if (task.source !== "gitea") return { title, goal, repos, acceptanceCriteria, round, maxRounds, branch };
  const repo = `${task.repoOwner ?? "?"}/${task.repoName ?? "?"}`;
  return {
    title: title ?? `/agent ${task.commandKind ?? "?"} on ${repo}#${task.targetNumber ?? "?"} (${task.targetType === "pr" ? "pull request" : "issue"})`,
    goal: goal ?? task.commandMessage,
    repos: repos.length > 0 ? repos : [repo],
    acceptanceCriteria,
    round,
    maxRounds,
    branch,
  };
}
