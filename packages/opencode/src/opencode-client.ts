import { Agent, type Dispatcher } from "undici";
import { OpencodeApi } from "./api/opencode-api.ts";
import { OpencodeHttp } from "./http/opencode-http.ts";
import { readConfigModel } from "./model/config-model.ts";
import { parseModelRef, type ModelRef } from "./model/model-ref.ts";
import { ActivePoller } from "./run/active-poller.ts";
import { EventHub } from "./run/event-hub.ts";
import { runAgent, type OpencodeLogger } from "./run/agent-run.ts";
import { LocationWarmup } from "./run/location-warmup.ts";
import type { AgentRunResult, RunAgentOptions } from "./run/run-types.ts";
import { summarizeSessionProgress, type SessionProgress } from "./run/session-progress.ts";
import { checkServer, type ServerInfo } from "./server-check.ts";

/** Latest messages a progress sample reads: enough for a long run's recent steps, one request. */
const PROGRESS_MESSAGES = 200;

export interface OpencodeClientOptions {
  /** e.g. `http://127.0.0.1:4096` */
  baseUrl: string;
  /** `OPENCODE_SERVER_PASSWORD` of the server (basic auth, user "opencode"). */
  password?: string;
  logger?: OpencodeLogger;
  /** Model pinned on every session unless a run names one ("provider/model"). */
  defaultModel?: string;
  /** opencode config file (JSONC) whose top-level `model` is the fallback pin. */
  configFile?: string;
  /** Custom undici dispatcher (e.g. with interceptors); default a keep-alive Agent owned by the client. */
  dispatcher?: Dispatcher;
  /** Timeout of ordinary API calls (ms), default 15 s. */
  requestTimeoutMs?: number;
}

export interface OpencodeClient {
  readonly baseUrl: string;
  /** O1 start-up gate; throws OpencodeUnavailableError | OpencodeTooOldError | OpencodeContractError. */
  checkServer(signal?: AbortSignal): Promise<ServerInfo>;
  /** Runs an agent turn to a result (never throws for run failures; see `outcome`). */
  runAgent<T = unknown>(options: RunAgentOptions<T>): Promise<AgentRunResult<T>>;
  /**
   * What a session has done so far (newest tool call, tokens, cost), read from its latest
   * messages: the sampler a job's live progress (O6) polls while the agent runs.
   */
  sessionProgress(sessionId: string, signal?: AbortSignal): Promise<SessionProgress>;
  /** Stops a session's running turn (no-op when idle). */
  interrupt(sessionId: string): Promise<void>;
  /** Closes the owned connection pool. */
  close(): Promise<void>;
}

export function createOpencodeClient(options: OpencodeClientOptions): OpencodeClient {
  const owned = options.dispatcher ? undefined : new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
  const http = new OpencodeHttp({
    baseUrl: options.baseUrl,
    ...(options.password ? { password: options.password } : {}),
    dispatcher: options.dispatcher ?? (owned as Agent),
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
  });
  const api = new OpencodeApi(http);
  const activePoller = new ActivePoller(() => api.active());
  const warmup = new LocationWarmup(api);
  const events = new EventHub(http);
  let configModel: Promise<ModelRef | undefined> | undefined;

  const resolveModel = async (requested: RunAgentOptions["model"]): Promise<ModelRef | undefined> => {
    if (typeof requested === "object") return requested;
    const name = requested ?? options.defaultModel;
    if (name !== undefined) {
      const ref = parseModelRef(name);
      if (!ref) throw new Error(`model "${name}" is not "provider/model"`);
      return ref;
    }
    if (!options.configFile) return undefined;
    configModel ??= readConfigModel(options.configFile);
    return configModel;
  };

  return {
    baseUrl: http.baseUrl,
    checkServer: (signal) => checkServer(api, signal),
    runAgent: (runOptions) => runAgent({ api, activePoller, events, warmup, logger: options.logger, resolveModel }, runOptions),
    sessionProgress: async (sessionId, signal) =>
      summarizeSessionProgress(await api.messages(sessionId, PROGRESS_MESSAGES, signal)),
    interrupt: (sessionId) => api.interrupt(sessionId),
    close: async () => {
      await owned?.close();
    },
  };
}
