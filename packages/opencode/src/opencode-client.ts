import type { Dispatcher } from "undici";
import { Agent } from "./http/undici-core.ts";
import { OpencodeHttpError } from "./errors/opencode-http.error.ts";
import { readConfigModel } from "./model/config-model.ts";
import { parseModelRef, type ModelRef } from "./model/model-ref.ts";
import { createServerHandle, type OpencodeServerHandle } from "./pool/opencode-server-handle.ts";
import { ServerPool } from "./pool/server-pool.ts";
import { runAgent, type OpencodeLogger } from "./run/agent-run.ts";
import { finishedTurnOf, type FinishedTurn } from "./run/finished-turn.ts";
import { interruptWithin } from "./run/interrupt.ts";
import type { AgentRunResult, RunAgentOptions } from "./run/run-types.ts";
import { summarizeSessionProgress, type SessionProgress } from "./run/session-progress.ts";
import { checkServerOnce, type ServerInfo } from "./server-check.ts";

/** Default cap on concurrent agent runs per server (OPENCODE_MAX_PROMPTS_PER_SERVER). */
export const DEFAULT_MAX_CONCURRENT_PROMPTS = 8;
/** Latest messages a progress sample (or a finished turn's reading) reads: a long run's recent steps, one request. */
const PROGRESS_MESSAGES = 200;

export interface OpencodeClientOptions {
  /** e.g. `http://127.0.0.1:4096` (the only server unless `baseUrls` names several). */
  baseUrl: string;
  /** Several servers sharing the sessions (OPENCODE_URLS): least-loaded placement, session affinity. */
  baseUrls?: readonly string[];
  /** `OPENCODE_SERVER_PASSWORD` of the server(s) (basic auth, user "opencode"). */
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
  /** Most runs one server works on at once; more wait in FIFO order (default 8). */
  maxConcurrentPrompts?: number;
}

export interface OpencodeClient {
  /** The first (or only) server. */
  readonly baseUrl: string;
  /** Every server of the pool. */
  readonly serverUrls: readonly string[];
  /** O1 start-up gate on every server; throws OpencodeUnavailableError | OpencodeTooOldError | OpencodeContractError. */
  checkServer(signal?: AbortSignal): Promise<ServerInfo>;
  /**
   * Runs an agent turn to a result (never throws for run failures; see `outcome`). With
   * `sessionId` it continues that session on its server (`serverUrl` from the trace, else found).
   */
  runAgent<T = unknown>(options: RunAgentOptions<T>): Promise<AgentRunResult<T>>;
  /**
   * Stops a session's running turn (no-op when idle or unknown), also one this client did not
   * start. Bounded to ~2 s; throws when the server could not be told.
   */
  interrupt(sessionId: string, serverUrl?: string): Promise<void>;
  /**
   * Boots `directory` on every server ahead of the first run there, for the model's provider
   * (`model`, else the client's default): opencode loads a location lazily, 5-20 s on a loaded
   * machine, and a run in it waits for that. Runs starting meanwhile share the wait. Resolves when
   * every server is ready (or its wait ran out); rejects when a server cannot be asked.
   */
  warmDirectory(directory: string, options?: { model?: string | ModelRef; signal?: AbortSignal }): Promise<void>;
  /** Runs holding or waiting for a slot, per server URL. */
  load(): Record<string, { running: number; waiting: number }>;
  /**
   * What a session has done so far (newest tool call, tokens, cost), read from its latest
   * messages: the sampler a job's live progress (O6) polls while the agent runs.
   */
  sessionProgress(sessionId: string, signal?: AbortSignal, serverUrl?: string): Promise<SessionProgress>;
  /**
   * The answer a session gave to `prompt` in a turn that ended on its own while no run watched it
   * (the process running it died): undefined while the session still runs a turn, when that turn
   * ended in an error or was cut short, or when the server no longer holds the session.
   */
  finishedTurn(sessionId: string, prompt: string, serverUrl?: string): Promise<FinishedTurn | undefined>;
  /** Closes the owned connection pool. */
  close(): Promise<void>;
}

export function createOpencodeClient(options: OpencodeClientOptions): OpencodeClient {
  const owned = options.dispatcher ? undefined : new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
  const urls = options.baseUrls?.length ? options.baseUrls : [options.baseUrl];
  const servers: OpencodeServerHandle[] = urls.map((baseUrl) =>
    createServerHandle({
      baseUrl,
      ...(options.password ? { password: options.password } : {}),
      dispatcher: options.dispatcher ?? (owned as Dispatcher),
      ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
      maxConcurrentPrompts: options.maxConcurrentPrompts ?? DEFAULT_MAX_CONCURRENT_PROMPTS,
    }),
  );
  const pool = new ServerPool(servers);
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

  const passedChecks = new Map<string, ServerInfo>();
  return {
    baseUrl: servers[0]?.url as string,
    serverUrls: servers.map((s) => s.url),
    async checkServer(signal) {
      const infos = await Promise.all(
        servers.map(async (s) => {
          const info = await checkServerOnce(s.api, signal, passedChecks.get(s.url));
          passedChecks.set(s.url, info);
          return info;
        }),
      );
      return infos[0] as ServerInfo;
    },
    async runAgent(runOptions) {
      const located = runOptions.sessionId ? await pool.locate(runOptions.sessionId, runOptions.serverUrl, runOptions.signal).catch(() => undefined) : undefined;
      const server = located ?? pool.place(runOptions.preferServerUrl);
      return runAgent(
        { ...server, logger: options.logger, resolveModel, rememberSession: (id) => pool.remember(id, server) },
        runOptions,
      );
    },
    async interrupt(sessionId, serverUrl) {
      const server = await pool.locate(sessionId, serverUrl);
      if (!server) return;
      const result = await interruptWithin(server.api, sessionId);
      if (!result.ok && !(result.error instanceof OpencodeHttpError && result.error.status === 404)) throw result.error;
    },
    async warmDirectory(directory, warmOptions) {
      const providerId = (await resolveModel(warmOptions?.model))?.providerID;
      await Promise.all(servers.map((s) => s.warmup.ready(directory, providerId, warmOptions?.signal)));
    },
    load: () => Object.fromEntries(servers.map((s) => [s.url, { running: s.gate.load - s.gate.waiting, waiting: s.gate.waiting }])),
    async sessionProgress(sessionId, signal, serverUrl) {
      const server = (await pool.locate(sessionId, serverUrl, signal)) ?? pool.servers[0];
      const handle = server as OpencodeServerHandle;
      const [messages, prices] = await Promise.all([handle.api.messages(sessionId, PROGRESS_MESSAGES, signal), handle.prices.get(signal)]);
      return summarizeSessionProgress(messages, prices);
    },
    async finishedTurn(sessionId, prompt, serverUrl) {
      const server = await pool.locate(sessionId, serverUrl);
      if (!server) return undefined;
      try {
        if ((await server.api.active()).has(sessionId)) return undefined;
        const [messages, prices] = await Promise.all([server.api.messages(sessionId, PROGRESS_MESSAGES), server.prices.get()]);
        return finishedTurnOf(messages, prompt, prices);
      } catch (err) {
        if (err instanceof OpencodeHttpError && err.status === 404) return undefined;
        throw err;
      }
    },
    close: async () => {
      for (const s of servers) s.events.close();
      await owned?.close();
    },
  };
}
