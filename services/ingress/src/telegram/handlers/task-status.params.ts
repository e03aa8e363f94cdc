import type { TelegramStatus } from "@ratatoskr/contracts";
import type { AgentTrace, Task, TracesSummary } from "@ratatoskr/db";
import type { LiveRun, TemplateParams, TraceLine } from "@ratatoskr/notifier";

/** `/status N` shows the latest few runs: enough to see what happened, short enough to read. */
export const STATUS_TRACE_LIMIT = 5;

/** Placeholder for a title the analyst has not written yet. */
const NO_TITLE = "—";

export function traceLine(trace: AgentTrace, now: Date): TraceLine {
  const end = trace.endedAt ?? now;
  return {
    agent: trace.agent,
    outcome: trace.outcome,
    durationMs: Math.max(0, end.getTime() - trace.startedAt.getTime()),
    tokens: trace.tokensInput + trace.tokensOutput + trace.tokensReasoning,
    costUsd: trace.cost,
  };
}

/**
 * Params of `task.status` from the row, its traces (oldest first, as the repository lists them),
 * the total over all of them and the run in progress, if any (O6: its spend so far is in the total).
 */
export function taskStatusParams(
  task: Task,
  traces: readonly AgentTrace[],
  total: TracesSummary,
  live: LiveRun | undefined,
  now = new Date(),
): TemplateParams["task.status"] {
  return {
    taskId: task.id,
    status: task.status as TelegramStatus,
    title: task.title ?? NO_TITLE,
    repos: task.repos,
    round: task.round,
    maxRounds: task.maxRounds,
    branch: task.branch,
    traces: traces.slice(-STATUS_TRACE_LIMIT).map((trace) => traceLine(trace, now)),
    live: live ? { stage: live.stage, round: live.round, lastTool: live.lastTool, serverUrl: live.serverUrl, sessionId: live.sessionId } : null,
    totalTokens: total.tokens + (live?.tokens ?? 0),
    totalCostUsd: total.costUsd + (live?.costUsd ?? 0),
    budgetUsd: task.budgetUsd,
  };
}

export interface AttachTarget {
  serverUrl: string;
  sessionId: string;
}

const LIVE: ReadonlySet<string> = new Set<TelegramStatus>(["approved", "running"]);

/**
 * Where a person can watch the agent: the session stored on the task, else the latest trace
 * that has one. Only while the task is being worked on; a finished session is not live.
 */
export function attachTarget(task: Task, traces: readonly AgentTrace[]): AttachTarget | null {
  if (!LIVE.has(task.status)) return null;
  if (task.agentSessionId && task.agentServerUrl) {
    return { serverUrl: task.agentServerUrl, sessionId: task.agentSessionId };
  }
  const latest = [...traces].reverse().find((t) => t.sessionId && t.serverUrl);
  return latest?.sessionId && latest.serverUrl
    ? { serverUrl: latest.serverUrl, sessionId: latest.sessionId }
    : null;
}
