import type { AgentTrace, AgentTraceRepository } from "@ratatoskr/db";
import { extractVerdict, type AgentRunResult, type OpencodeClient } from "@ratatoskr/opencode";
import type { z } from "zod";

/** The outcomes a step settles on without retrying the run: a retried job reuses them. */
const SETTLING_OUTCOMES = ["completed", "timeout"] as const;

export interface FinishedRunQuery<T> {
  taskId: number;
  agent: string;
  /** The job asking; a job without an id (added by hand) never reuses a run. */
  jobId: string | undefined;
  schema: z.ZodType<T>;
  /**
   * Only a run asked exactly this: for a step whose input may grow while its job waits (a
   * dialogue's new message), a run over less than the retry would ask is not its answer.
   */
  prompt?: string;
}

type Traces = Pick<AgentTraceRepository, "findFinished" | "listUnfinished" | "finish">;

/**
 * The run of `agent` that an earlier attempt of this very job saw to its end (completed or timed
 * out) before its process died, rebuilt from its trace: the retry goes on from its answer instead
 * of paying the model for the same run again. Every step that runs a model asks this before it
 * runs (dev, reviewer, planner, postmortem, the dialogue). A run the attempt left unfinished
 * whose session went on to answer it while the process was down counts too: its trace is
 * completed from the session (see finishedInSession). Undefined when there is none, when it was
 * asked something else (`prompt`), or when its stored answer no longer reads as a verdict (then
 * the step runs as if it never had).
 */
export async function finishedRunOf<T>(
  traces: Traces,
  query: FinishedRunQuery<T>,
  opencode: Pick<OpencodeClient, "finishedTurn">,
): Promise<AgentRunResult<T> | undefined> {
  if (!query.jobId) return undefined;
  const row =
    (await traces.findFinished(query.taskId, query.agent, query.jobId, SETTLING_OUTCOMES)) ??
    (await finishedInSession(traces, opencode, { ...query, jobId: query.jobId }));
  if (!row || (query.prompt !== undefined && row.prompt !== query.prompt)) return undefined;
  const timedOut = row.outcome === "timeout";
  const output = row.output ?? "";
  const extracted = timedOut ? undefined : extractVerdict(output, query.schema);
  if (extracted && !extracted.ok) return undefined;
  const outcome = timedOut ? "timeout" : "ok";
  const sessionId = row.sessionId ?? undefined;
  const serverUrl = row.serverUrl ?? "";
  const error = timedOut ? new Error(row.error ?? "the run timed out") : undefined;
  return {
    outcome,
    sessionId,
    serverUrl,
    output,
    verdict: extracted?.value,
    error,
    timeoutKind: undefined,
    expectedModel: row.model ?? undefined,
    actualModel: row.model ?? undefined,
    warnings: [],
    repaired: false,
    resumed: false,
    trace: {
      sessionId,
      serverUrl,
      agent: row.agent,
      model: row.model ?? undefined,
      tokens: {
        input: row.tokensInput,
        output: row.tokensOutput,
        reasoning: row.tokensReasoning,
        cacheRead: row.tokensCacheRead,
        cacheWrite: row.tokensCacheWrite,
      },
      cost: row.cost,
      startedAt: row.startedAt,
      endedAt: row.endedAt ?? row.startedAt,
      outcome,
      prompt: row.prompt,
      output,
      error: error?.message,
    },
  };
}

/**
 * The newest run this job left unfinished (its process died mid-run) when its session answered
 * the run's prompt to the end meanwhile with a verdict: its trace is completed with that answer
 * and what it cost, and returned. Undefined when the session is still at it, was cut short, gave
 * no verdict, or cannot be asked: the run stays open, and the step resumes its session as for any
 * run cut off.
 */
async function finishedInSession<T>(
  traces: Traces,
  opencode: Pick<OpencodeClient, "finishedTurn">,
  query: FinishedRunQuery<T> & { jobId: string },
): Promise<AgentTrace | undefined> {
  const dead = (await traces.listUnfinished(query.taskId, query.agent)).find((t) => t.jobId === query.jobId);
  if (!dead?.sessionId || (query.prompt !== undefined && dead.prompt !== query.prompt)) return undefined;
  const turn = await opencode
    .finishedTurn(dead.sessionId, dead.prompt, dead.serverUrl ?? undefined)
    .catch(() => undefined);
  if (!turn || !extractVerdict(turn.output, query.schema).ok) return undefined;
  return traces.finish(dead.id, {
    agent: dead.agent,
    prompt: dead.prompt,
    startedAt: dead.startedAt,
    ...turn,
    outcome: "completed",
  });
}
