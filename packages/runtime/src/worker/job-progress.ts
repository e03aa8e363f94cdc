import type { Logger } from "pino";
import type { Queue } from "bullmq";

/**
 * What a running agent job shows in Bull Board (O6): where it is and what it has cost so far.
 * Stored as the job's progress object; the job log gets one line per change of stage or tool.
 */
export interface AgentJobProgress {
  /** e.g. "preparing workspace", "dev agent", "committing", "reviewer agent". */
  stage: string;
  round: number | null;
  /** Name of the latest tool call the agent made (edit, bash, read …), null before the first. */
  lastTool: string | null;
  /** input + output + reasoning so far. */
  tokens: number;
  costUsd: number;
  /** The opencode session, once it exists (what `/attach N` points at). */
  sessionId: string | null;
  /** ISO time of this report. */
  at: string;
}

/** The part of a BullMQ job the reporter needs (a real Job satisfies it). */
export interface ProgressTarget {
  id?: string | undefined;
  updateProgress(progress: object): Promise<void>;
  log(line: string): Promise<unknown>;
}

export interface JobProgressReporter {
  /** Merges `update` into the progress and publishes it. Never throws: progress is best effort. */
  report(update: Partial<Omit<AgentJobProgress, "at">>): Promise<void>;
  /**
   * Reports what `sample` returns every `intervalMs` until the returned stop function is called
   * (or `signal` aborts). A failing sample is logged at debug and skipped.
   */
  every(
    intervalMs: number,
    sample: () => Promise<Partial<Omit<AgentJobProgress, "at">>>,
    signal?: AbortSignal,
  ): () => void;
  /** The latest progress as published. */
  current(): AgentJobProgress;
}

function logLine(p: AgentJobProgress): string {
  const round = p.round === null ? "" : ` round ${p.round}`;
  const tool = p.lastTool === null ? "" : `, last tool ${p.lastTool}`;
  return `${p.stage}${round}${tool}, ${p.tokens} tokens, $${p.costUsd.toFixed(4)}`;
}

/**
 * Live progress of one agent job through `job.updateProgress` and `job.log`, so Bull Board shows
 * a running task as it happens. Reports are serialized (a slow Redis never reorders them) and
 * a failed write is only logged: the job's real work never fails because of its progress.
 */
export function createJobProgress(
  job: ProgressTarget,
  start: { stage: string; round?: number | null },
  logger?: Pick<Logger, "debug" | "warn">,
  now: () => Date = () => new Date(),
): JobProgressReporter {
  let state: AgentJobProgress = {
    stage: start.stage,
    round: start.round ?? null,
    lastTool: null,
    tokens: 0,
    costUsd: 0,
    sessionId: null,
    at: now().toISOString(),
  };
  let lastLogged: string | null = null;
  let chain: Promise<void> = Promise.resolve();

  const publish = async (snapshot: AgentJobProgress): Promise<void> => {
    try {
      await job.updateProgress({ ...snapshot });
      // One log line per step the agent takes, not per sample.
      const key = `${snapshot.stage}|${snapshot.round}|${snapshot.lastTool}`;
      if (key !== lastLogged) {
        lastLogged = key;
        await job.log(`${snapshot.at} ${logLine(snapshot)}`);
      }
    } catch (err) {
      logger?.warn({ err, jobId: job.id }, "could not publish job progress");
    }
  };

  const report: JobProgressReporter["report"] = (update) => {
    const defined = Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined));
    state = { ...state, ...defined, at: now().toISOString() };
    const snapshot = state;
    chain = chain.then(() => publish(snapshot));
    return chain;
  };

  return {
    report,
    every(intervalMs, sample, signal) {
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const tick = async () => {
        if (stopped) return;
        try {
          await report(await sample());
        } catch (err) {
          logger?.debug({ err, jobId: job.id }, "progress sample failed");
        }
        if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
      };
      const stop = () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", stop);
      };
      signal?.addEventListener("abort", stop, { once: true });
      timer = setTimeout(() => void tick(), intervalMs);
      return stop;
    },
    current: () => state,
  };
}

/** A tool's name is the model's to choose: only a plain identifier is shown to people, never markup. */
const TOOL_NAME = /^[\w.-]{1,64}$/;

/**
 * What an agent job published with {@link createJobProgress}, read back for the person (`/status N`,
 * the Gitea status comment): only while the job is active, undefined otherwise. A last tool whose
 * name is not a plain identifier reads as none.
 */
export async function readAgentJobProgress(queue: Pick<Queue, "getJob">, jobId: string): Promise<AgentJobProgress | undefined> {
  const job = await queue.getJob(jobId);
  if (!job || !(await job.isActive())) return undefined;
  const progress: unknown = job.progress;
  if (typeof progress !== "object" || progress === null || typeof (progress as { stage?: unknown }).stage !== "string") return undefined;
  const published = progress as AgentJobProgress;
  const lastTool = typeof published.lastTool === "string" && TOOL_NAME.test(published.lastTool) ? published.lastTool : null;
  return { ...published, lastTool };
}
