import type { AgentTrace } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

/** What one agent run reports (the shape packages/opencode produces). */
export interface AgentTraceRecord {
  agent: string;
  prompt: string;
  output?: string | null;
  /** running | completed | failed | timeout | cancelled | interrupted */
  outcome: string;
  sessionId?: string | null;
  serverUrl?: string | null;
  model?: string | null;
  tokens?: { input?: number; output?: number; reasoning?: number; cacheRead?: number; cacheWrite?: number };
  /** USD. */
  cost?: number;
  error?: string | null;
  startedAt: Date;
  endedAt?: Date | null;
  /** The queue job that ran it (`<taskId>-<step>-<seq>`), so a retry of the job finds it. */
  jobId?: string | null;
}

/** What all agent runs of a task added up to (P5): `/status N` and the budget check read it. */
export interface TracesSummary {
  runs: number;
  /** input + output + reasoning, as in a trace line (cache reads are not new tokens). */
  tokens: number;
  /** USD. */
  costUsd: number;
}

/** A run whose session exists and whose answer is still to come. */
export interface StartedRun {
  agent: string;
  round?: number | null;
  prompt: string;
  sessionId: string;
  serverUrl: string;
  model?: string | null;
  startedAt: Date;
  jobId?: string | null;
}

/** The columns a run's report fills, whether it is recorded at once or completes a started trace. */
function reportedColumns(trace: AgentTraceRecord) {
  const tokens = trace.tokens ?? {};
  return {
    prompt: trace.prompt,
    output: trace.output ?? null,
    outcome: trace.outcome,
    model: trace.model ?? null,
    tokensInput: tokens.input ?? 0,
    tokensOutput: tokens.output ?? 0,
    tokensReasoning: tokens.reasoning ?? 0,
    tokensCacheRead: tokens.cacheRead ?? 0,
    tokensCacheWrite: tokens.cacheWrite ?? 0,
    cost: trace.cost ?? 0,
    error: trace.error ?? null,
  };
}

/** Agent runs of a task (P5), oldest first. */
export class AgentTraceRepository {
  constructor(private readonly db: DbClient) {}

  record(taskId: number, trace: AgentTraceRecord, round: number | null = null): Promise<AgentTrace> {
    return this.db.agentTrace.create({
      data: {
        taskId,
        round,
        agent: trace.agent,
        ...reportedColumns(trace),
        sessionId: trace.sessionId ?? null,
        serverUrl: trace.serverUrl ?? null,
        startedAt: trace.startedAt,
        endedAt: trace.endedAt ?? null,
        jobId: trace.jobId ?? null,
      },
    });
  }

  /**
   * Opens the trace of a run that just got its session (outcome `running`, no end yet), so the
   * session is on record while the run is live; {@link finish} completes the same row.
   */
  start(taskId: number, run: StartedRun): Promise<AgentTrace> {
    return this.record(taskId, { ...run, outcome: "running", endedAt: null }, run.round ?? null);
  }

  /** Completes a trace opened by {@link start} with what the run reported. */
  finish(id: number, trace: AgentTraceRecord): Promise<AgentTrace> {
    return this.db.agentTrace.update({
      where: { id },
      data: {
        ...reportedColumns(trace),
        // Kept as the start recorded them unless the report names them.
        sessionId: trace.sessionId ?? undefined,
        serverUrl: trace.serverUrl ?? undefined,
        endedAt: trace.endedAt ?? new Date(),
      },
    });
  }

  /** Runs of one agent that started and never finished (their process died mid-run), newest first. */
  listUnfinished(taskId: number, agent: string): Promise<AgentTrace[]> {
    return this.db.agentTrace.findMany({
      where: { taskId, agent, endedAt: null },
      orderBy: [{ startedAt: "desc" }, { id: "desc" }],
    });
  }

  /**
   * The newest run of `agent` that job `jobId` saw to its end with one of `outcomes`: an earlier
   * attempt of the same job finished it and died before the job reported, so the retry reuses
   * it instead of paying for the run again.
   */
  findFinished(taskId: number, agent: string, jobId: string, outcomes: readonly string[]): Promise<AgentTrace | null> {
    return this.db.agentTrace.findFirst({
      where: { taskId, agent, jobId, endedAt: { not: null }, outcome: { in: [...outcomes] } },
      orderBy: [{ startedAt: "desc" }, { id: "desc" }],
    });
  }

  /** Marks a run whose process died as interrupted (its session was interrupted by the retry). */
  markInterrupted(id: number, error: string): Promise<AgentTrace> {
    return this.db.agentTrace.update({ where: { id }, data: { outcome: "interrupted", error, endedAt: new Date() } });
  }

  list(taskId: number): Promise<AgentTrace[]> {
    return this.db.agentTrace.findMany({ where: { taskId }, orderBy: [{ startedAt: "asc" }, { id: "asc" }] });
  }

  /** The task's total over every run, finished or not (a live run's cost so far counts). */
  async tracesSummary(taskId: number): Promise<TracesSummary> {
    const total = await this.db.agentTrace.aggregate({
      where: { taskId },
      _count: { _all: true },
      _sum: { tokensInput: true, tokensOutput: true, tokensReasoning: true, cost: true },
    });
    const sum = total._sum;
    return {
      runs: total._count._all,
      tokens: (sum.tokensInput ?? 0) + (sum.tokensOutput ?? 0) + (sum.tokensReasoning ?? 0),
      costUsd: sum.cost ?? 0,
    };
  }

  /** The latest run of one agent, e.g. the dev session `/continue N` resumes. */
  findLatest(taskId: number, agent: string): Promise<AgentTrace | null> {
    return this.db.agentTrace.findFirst({
      where: { taskId, agent },
      orderBy: [{ startedAt: "desc" }, { id: "desc" }],
    });
  }
}
