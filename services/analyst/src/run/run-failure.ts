import type { AnalystProblem } from "@ratatoskr/contracts";
import {
  AgentMessageError,
  HaltedTurnError,
  ModelConfigError,
  OpencodeContractError,
  OpencodeHttpError,
  OpencodeTooOldError,
  OpencodeUnavailableError,
  PromptQueueTimeoutError,
  ProviderError,
  SilentSessionError,
  VerdictValidationError,
  type AgentRunResult,
} from "@ratatoskr/opencode";
import { isPermanentHttpStatus } from "@ratatoskr/runtime";
import { verdictProblem } from "../verdict/verdict-problem.ts";

/**
 * How to treat an agent run that produced no usable verdict:
 * - `settle`: retrying cannot help (the model already had its repair prompt, a timeout, a server
 *   too old): release the analysis now and tell the person `problem`.
 * - `retry`: the job is retried with backoff; on its last attempt it settles with `problem`.
 * - `interrupted`: the job itself was cancelled or handed back at shutdown; leave the task alone.
 */
export type RunFailure =
  | { action: "settle"; problem: AnalystProblem }
  | { action: "retry"; problem: AnalystProblem }
  | { action: "interrupted" };

function classifyError(error: Error | undefined, output: string): RunFailure {
  if (error instanceof VerdictValidationError) return { action: "settle", problem: verdictProblem(output) };
  if (error instanceof OpencodeUnavailableError || error instanceof PromptQueueTimeoutError) {
    return { action: "retry", problem: "unavailable" };
  }
  // A provider that refused the credentials (401/403) or the request will refuse it again.
  if (error instanceof ProviderError && !error.retryable) return { action: "settle", problem: "provider-refused" };
  // The model produced nothing (provider down, model missing): often a passing provider outage.
  if (error instanceof SilentSessionError || error instanceof AgentMessageError || error instanceof HaltedTurnError) {
    return { action: "retry", problem: "no-verdict" };
  }
  if (error instanceof OpencodeHttpError) {
    // A 4xx means our request or the server's setup is wrong; a 5xx that the server is in trouble.
    return isPermanentHttpStatus(error.status)
      ? { action: "settle", problem: "server-misconfigured" }
      : { action: "retry", problem: "unavailable" };
  }
  // A server too old, without the v2 routes, or a broken model setting: an operator must act.
  if (
    error instanceof OpencodeTooOldError ||
    error instanceof OpencodeContractError ||
    error instanceof ModelConfigError
  ) {
    return { action: "settle", problem: "server-misconfigured" };
  }
  // Anything else is ours (a bug, the database): not a server that "could not be reached".
  return { action: "retry", problem: "internal" };
}

/** The problem the person is told when the handler itself threw on its last attempt. */
export function problemOfThrown(err: unknown): AnalystProblem {
  const failure = classifyError(err instanceof Error ? err : undefined, "");
  return "problem" in failure ? failure.problem : "internal";
}

export function classifyRunFailure(result: Pick<AgentRunResult, "outcome" | "error" | "output">): RunFailure {
  switch (result.outcome) {
    case "cancelled":
      return { action: "interrupted" };
    case "timeout":
      // Retrying a run that already used its whole budget would only triple the wait.
      return { action: "settle", problem: "timeout" };
    default:
      return classifyError(result.error, result.output);
  }
}
