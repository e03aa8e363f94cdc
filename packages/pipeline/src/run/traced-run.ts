import type { AgentTraceRecord, AgentTraceRepository, TaskRepository } from "@ratatoskr/db";
import type { AgentRunResult, OpencodeClient, RunAgentOptions, SessionProgress, TraceRecord } from "@ratatoskr/opencode";
import type { JobProgressReporter, Logger } from "@ratatoskr/runtime";

/** How often a live run's tokens, cost and last tool are sampled into the job's progress (O6). */
const PROGRESS_SAMPLE_MS = 2_000;

export interface TracedRunDeps {
  traces: Pick<AgentTraceRepository, "start" | "finish" | "record" | "listUnfinished" | "markInterrupted">;
  tasks: Pick<TaskRepository, "updateRun">;
  opencode: Pick<OpencodeClient, "runAgent" | "interrupt" | "serverUrls"> & Partial<Pick<OpencodeClient, "sessionProgress">>;
  logger: Logger;
  /** The job's live progress (Bull Board); sampled from the session while the run is live. */
  progress?: JobProgressReporter;
}

export interface TracedRunInput<T> {
  taskId: number;
  round: number | null;
  run: Omit<RunAgentOptions<T>, "onSession">;
  /**
   * Store the session on the task as soon as it exists (`/attach N`, `/continue N`, and the
   * retry of a job whose process died finds it there).
   */
  storeOnTask: boolean;
  /**
   * The queue job running it, kept on the trace: a retry of the job finds the run it finished and
   * reuses it (see finishedRunOf). Every step names its job; undefined only for a job without an id.
   */
  jobId: string | undefined;
  /** Told what the live session has done at each progress sample (the budget watches its spend). */
  onLive?: ((live: SessionProgress) => void) | undefined;
}

/** The traces table speaks of completed runs; the client says "ok". */
export function traceRow(trace: TraceRecord): AgentTraceRecord {
  return {
    ...trace,
    outcome: trace.outcome === "ok" ? "completed" : trace.outcome,
    sessionId: trace.sessionId ?? null,
    model: trace.model ?? null,
    error: trace.error ?? null,
  };
}

/**
 * One agent run with its trace: the trace row (and the task's session columns) are written the
 * moment the session exists, and completed when the run ends — so a live run is attachable and
 * a run whose process dies leaves an unfinished trace the retry finds (see {@link settleDeadRuns}).
 */
export async function runTraced<T>(deps: TracedRunDeps, input: TracedRunInput<T>): Promise<AgentRunResult<T>> {
  let traceId: number | undefined;
  let stopSampling: (() => void) | undefined;
  await deps.progress?.report({ stage: `${input.run.agent} agent`, round: input.round });
  const requestedAt = Date.now();
  const result = await deps.opencode.runAgent<T>({
    ...input.run,
    onSession: async ({ sessionId, serverUrl }) => {
      const trace = await deps.traces.start(input.taskId, {
        agent: input.run.agent,
        round: input.round,
        prompt: input.run.prompt,
        sessionId,
        serverUrl,
        startedAt: new Date(),
        jobId: input.jobId ?? null,
      });
      traceId = trace.id;
      if (input.storeOnTask) await deps.tasks.updateRun(input.taskId, { agentSessionId: sessionId, agentServerUrl: serverUrl });
      // openMs: how long opencode took to have the session ready (directory boot, session create).
      deps.logger.info({ sessionId, serverUrl, agent: input.run.agent, round: input.round, openMs: Date.now() - requestedAt }, "agent run started");
      const sample = deps.opencode.sessionProgress;
      if (deps.progress && sample) {
        await deps.progress.report({ sessionId });
        stopSampling = deps.progress.every(PROGRESS_SAMPLE_MS, async () => {
          const live = await sample(sessionId, undefined, serverUrl);
          input.onLive?.(live);
          return { lastTool: live.lastTool, tokens: live.tokens, costUsd: live.costUsd };
        });
      }
    },
  }).finally(() => stopSampling?.());
  const { tokens } = result.trace;
  await deps.progress?.report({ tokens: tokens.input + tokens.output + tokens.reasoning, costUsd: result.trace.cost });
  const row = { ...traceRow(result.trace), jobId: input.jobId ?? null };
  if (traceId === undefined) await deps.traces.record(input.taskId, row, input.round);
  else await deps.traces.finish(traceId, row);
  return result;
}

/** A dead attempt's session for the next run to continue, on the server that holds it. */
export interface ResumeTarget {
  resumeSessionId: string | undefined;
  /** The server of `resumeSessionId` (from its trace): pass it as the run's `serverUrl`. */
  resumeServerUrl: string | undefined;
}

/**
 * Before a new run of `agent` for a task: runs that started and never finished belong to an
 * attempt whose process died. Their sessions may still be working, so each is interrupted on its
 * own server and its trace closed; the newest one's session (and its server) is returned for the
 * new run to continue, so one task step never has two live sessions. A session on a server this
 * process is not configured for is left to that server's timeouts.
 */
export async function settleDeadRuns(deps: TracedRunDeps, taskId: number, agent: string): Promise<ResumeTarget> {
  const unfinished = await deps.traces.listUnfinished(taskId, agent);
  let resume: ResumeTarget = { resumeSessionId: undefined, resumeServerUrl: undefined };
  for (const trace of unfinished) {
    const serverUrl = trace.serverUrl ? ownServer(deps.opencode.serverUrls, trace.serverUrl) : undefined;
    const known = trace.serverUrl === null || serverUrl !== undefined;
    if (trace.sessionId && known) {
      await deps.opencode.interrupt(trace.sessionId, serverUrl).catch((err: unknown) => {
        deps.logger.warn({ err, sessionId: trace.sessionId, serverUrl }, "could not interrupt the session of a dead run");
      });
      if (!resume.resumeSessionId) resume = { resumeSessionId: trace.sessionId, resumeServerUrl: serverUrl };
    } else if (trace.sessionId) {
      deps.logger.warn(
        { sessionId: trace.sessionId, serverUrl: trace.serverUrl },
        "a dead run's session is on an opencode server this process does not use; it is left to that server's timeouts",
      );
    }
    await deps.traces.markInterrupted(trace.id, "the process running it stopped before the run ended");
  }
  if (unfinished.length > 0) deps.logger.warn({ taskId, agent, runs: unfinished.length, ...resume }, "settled runs of a dead attempt");
  return resume;
}

/** `url` as one of the client's servers (trailing slashes aside), else undefined. */
export function ownServer(serverUrls: readonly string[], url: string): string | undefined {
  const clean = url.replace(/\/+$/, "");
  return serverUrls.find((s) => s === clean);
}

/**
 * The run options that continue `sessionId` on the server that holds it (from the trace or the
 * task row): the pool sends it there instead of asking every server or opening a new session.
 */
export function resumeOptions(sessionId: string | null | undefined, serverUrl: string | null | undefined): { sessionId?: string; serverUrl?: string } {
  if (!sessionId) return {};
  return serverUrl ? { sessionId, serverUrl } : { sessionId };
}
