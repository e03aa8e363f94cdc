import type { AgentTrace } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

/** What one agent run reports (the shape packages/opencode produces). */
export interface AgentTraceRecord {
  agent: string;
  prompt: string;
  output?: string | null;
  /** completed | failed | timeout | cancelled | interrupted */
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
}

/** What all agent runs of a task added up to (P5): `/status N` and the budget check read it. */
export interface TracesSummary {
  runs: number;
  /** input + output + reasoning, as in a trace line (cache reads are not new tokens). */
  tokens: number;
  /** USD. */
  costUsd: number;
}

/** Agent runs of a task (P5), oldest first. */
export class AgentTraceRepository {
  constructor(private readonly db: DbClient) {}

  record(taskId: number, trace: AgentTraceRecord, round: number | null = null): Promise<AgentTrace> {
    const tokens = trace.tokens ?? {};
    return this.db.agentTrace.create({
      data: {
        taskId,
        round,
        agent: trace.agent,
        prompt: trace.prompt,
        output: trace.output ?? null,
        outcome: trace.outcome,
        sessionId: trace.sessionId ?? null,
        serverUrl: trace.serverUrl ?? null,
        model: trace.model ?? null,
        tokensInput: tokens.input ?? 0,
        tokensOutput: tokens.output ?? 0,
        tokensReasoning: tokens.reasoning ?? 0,
        tokensCacheRead: tokens.cacheRead ?? 0,
        tokensCacheWrite: tokens.cacheWrite ?? 0,
        cost: trace.cost ?? 0,
        error: trace.error ?? null,
        startedAt: trace.startedAt,
        endedAt: trace.endedAt ?? null,
      },
    });
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
