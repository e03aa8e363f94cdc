import type { AgentTraceRepository } from "@ratatoskr/db";
import { ownServer, resumeOptions, settleDeadRuns, type TracedRunDeps } from "./traced-run.ts";

export type StepSessionDeps = TracedRunDeps & { traces: Pick<AgentTraceRepository, "findLatest"> };

/**
 * The session a step's run of `agent` goes on in, on the server that holds it: a dead attempt's
 * (see settleDeadRuns), else the same round's run that was stopped (its budget interrupted it,
 * and Continue runs the step again), so the run's context is never started over. A run that
 * finished, failed or belongs to another round is not resumed: the step starts a fresh session.
 */
export async function stepSessionToResume(
  deps: StepSessionDeps,
  taskId: number,
  agent: string,
  round: number,
): Promise<{ sessionId?: string; serverUrl?: string }> {
  const dead = await settleDeadRuns(deps, taskId, agent);
  if (dead.resumeSessionId) return resumeOptions(dead.resumeSessionId, dead.resumeServerUrl);
  const latest = await deps.traces.findLatest(taskId, agent);
  if (!latest || latest.round !== round || latest.outcome !== "cancelled") return {};
  return resumeOptions(latest.sessionId, latest.serverUrl ? ownServer(deps.opencode.serverUrls, latest.serverUrl) : undefined);
}
