import type { AnalystProblem } from "@ratatoskr/contracts";
import {
  AgentMessageError,
  ModelConfigError,
  OpencodeContractError,
  OpencodeHttpError,
  OpencodeTooOldError,
  OpencodeUnavailableError,
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
  if (error instanceof OpencodeUnavailableError) return { action: "retry", problem: "unavailable" };
  // A provider that refused the credentials (401/403) or the request will refuse it again.
  if (error instanceof ProviderError && !error.retryable) return { action: "settle", problem: "unavailable" };
  // The model produced nothing (provider down, model missing): often a passing provider outage.
  if (error instanceof SilentSessionError || error instanceof AgentMessageError) {
    return { action: "retry", problem: "no-verdict" };
  }
  if (error instanceof OpencodeHttpError) {
    return { action: isPermanentHttpStatus(error.status) ? "settle" : "retry", problem: "unavailable" };
  }
  // A server too old, without the v2 routes, or a broken model setting: an operator must act.
  if (
    error instanceof OpencodeTooOldError ||
    error instanceof OpencodeContractError ||
    error instanceof ModelConfigError
  ) {
    return { action: "settle", problem: "unavailable" };
  }
  return { action: "retry", problem: "unavailable" };
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
