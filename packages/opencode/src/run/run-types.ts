import type { z } from "zod";
import type { ModelRef } from "../model/model-ref.ts";
import type { AgentPolicy } from "./permission-policy.ts";

export type RunOutcome = "ok" | "failed" | "timeout" | "cancelled";

export interface TokenUsage {
  input: number;
  output: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
}

/** One agent run, shaped for a `traces` table row (plain data, no db types). */
export interface TraceRecord {
  sessionId: string | undefined;
  /** The opencode server that holds the session: pass it back as `serverUrl` to resume there. */
  serverUrl: string;
  agent: string;
  /** "provider/model" that answered, else the pinned one. */
  model: string | undefined;
  tokens: TokenUsage;
  /** USD as reported by opencode. */
  cost: number;
  startedAt: Date;
  endedAt: Date;
  outcome: RunOutcome;
  prompt: string;
  output: string;
  error: string | undefined;
}

export interface RunAgentOptions<T = unknown> {
  agent: string;
  /** Absolute directory the session works in (`location.directory`). */
  directory: string;
  prompt: string;
  /** "provider/model" or a ref; else the client's default model, else the opencode config's `model`. */
  model?: string | ModelRef;
  policy: AgentPolicy;
  /** When given, the answer must contain a JSON object matching it (one repair prompt on failure). */
  schema?: z.ZodType<T>;
  /** No visible progress for this long (ms) interrupts the run → outcome "timeout". */
  idleTimeoutMs: number;
  /** Total budget (ms) for the run, repair included → outcome "timeout". */
  hardTimeoutMs: number;
  /** Aborting interrupts the run → outcome "cancelled". */
  signal?: AbortSignal;
  /**
   * Continue this existing session with `prompt` instead of creating one (a retried job resumes
   * its session rather than starting a second one). A turn it is still running is interrupted
   * first; a session no server holds any more is replaced by a new one (with a warning).
   */
  sessionId?: string;
  /** The server holding `sessionId` (from the trace), for a pool of servers; found when omitted. */
  serverUrl?: string;
  /**
   * For a new session: a server that has loaded `directory` already (the task's previous agent
   * ran there). Taken while it has a free slot, so the directory is not loaded a second time on
   * another server (a second copy of what opencode keeps per directory, and its CPU).
   */
  preferServerUrl?: string;
  /**
   * Called once the run's session exists (created or continued), before the prompt is sent, so
   * the caller can store it while the run is live (attach, cancel, one session per task step).
   * A throw fails the run before the prompt.
   */
  onSession?: (session: { sessionId: string; serverUrl: string }) => Promise<void> | void;
}

export interface AgentRunResult<T = unknown> {
  outcome: RunOutcome;
  /** Set once the session exists — also for timeouts and cancels, so it can be continued or attached. */
  sessionId: string | undefined;
  serverUrl: string;
  /** Text parts of the run's assistant messages, oldest first. */
  output: string;
  /** The validated verdict when a schema was given and the outcome is "ok". */
  verdict: T | undefined;
  /** The failure (typed error class) when outcome is "failed"; a description for timeout/cancel. */
  error: Error | undefined;
  /** Why a timeout happened. */
  timeoutKind: "idle" | "hard" | undefined;
  expectedModel: string | undefined;
  actualModel: string | undefined;
  /** Non-fatal problems, e.g. a model mismatch. */
  warnings: string[];
  /** True when the repair prompt was needed. */
  repaired: boolean;
  /** True when the run continued the caller's `sessionId` (false: a new session). */
  resumed: boolean;
  trace: TraceRecord;
}
