import type { AgentTraceRepository } from "@ratatoskr/db";
import { extractVerdict, type AgentRunResult } from "@ratatoskr/opencode";
import type { z } from "zod";

/** The outcomes a step settles on without retrying the run: a retried job reuses them. */
const SETTLING_OUTCOMES = ["completed", "timeout"] as const;

export interface FinishedRunQuery<T> {
  taskId: number;
  agent: string;
  /** The job asking; a job without an id (added by hand) never reuses a run. */
  jobId: string | undefined;
  schema: z.ZodType<T>;
}

/**
 * The run of `agent` that an earlier attempt of this very job saw to its end (completed or timed
 * out) before its process died, rebuilt from its trace: the retry goes on from its answer instead
 * of paying the model for the same run again. Undefined when there is none, or when its stored
 * answer no longer reads as a verdict (then the step runs as if it never had).
 */
export async function finishedRunOf<T>(
  traces: Pick<AgentTraceRepository, "findFinished">,
  query: FinishedRunQuery<T>,
): Promise<AgentRunResult<T> | undefined> {
  if (!query.jobId) return undefined;
  const row = await traces.findFinished(query.taskId, query.agent, query.jobId, SETTLING_OUTCOMES);
  if (!row) return undefined;
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
