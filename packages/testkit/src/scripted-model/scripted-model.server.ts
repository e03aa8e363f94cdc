import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { once } from "node:events";
import { parseChatRequest, promptTokens } from "./chat-request.ts";
import { routeRequest, ScriptView, workingDirectoryOf } from "./script-view.ts";
import { sseFrame, turnChunks } from "./sse-chunks.ts";
import type { ModelRequest, ScriptRule, ScriptTurn, TokenUsageReport } from "./script-types.ts";

export interface ScriptedModelOptions {
  /** Model id reported in `/v1/models` and in chunks. Default "scripted". */
  modelId?: string;
  /** Port to listen on (default 0 = any free port). */
  port?: number;
}

export interface ScriptedModel {
  /** Base URL for the provider's `baseURL` option, e.g. `http://127.0.0.1:4321/v1`. */
  readonly url: string;
  readonly modelId: string;
  /** Every chat request so far, in arrival order. */
  readonly requests: readonly ModelRequest[];
  /** Registers a rule; returns a function that removes it. */
  addRule(rule: ScriptRule): () => void;
  /** Reply when no rule matches (default: a short text saying so). */
  setFallback(fallback: ScriptTurn | ((req: ModelRequest) => ScriptTurn)): void;
  /** Requests of one opencode session. */
  requestsFor(sessionId: string): ModelRequest[];
  /** Drops rules, conversation state and recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * A scripted model several test files share, one after another (a vitest worker's): each file
 * opens its own view, with its own rules and requests, and closes it when done.
 */
export interface ScriptedModelServer {
  readonly url: string;
  readonly modelId: string;
  /**
   * A view that answers the requests of sessions in `claims` (and, while it is the newest open
   * view, those of directories nobody claims). Its `close()` closes the view: requests of its
   * directories are answered from then on with the default fallback, and recorded nowhere.
   */
  openView(claims: string[]): ScriptedModel & { claim(directory: string): void };
  close(): Promise<void>;
}

const ORPHAN_TURN: ScriptTurn = { text: "scripted model: the test that started this session has finished" };

/** Starts an OpenAI-compatible model on loopback that answers from a script. */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const server = await startScriptedModelServer(options);
  const view = new ScriptView("all");
  server.attach(view);
  return { ...viewApi(server, view), close: () => server.close() };
}

/** Starts a scripted model whose test files each open a view ({@link ScriptedModelServer}). */
export async function startSharedScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModelServer> {
  const server = await startScriptedModelServer(options);
  return {
    url: server.url,
    modelId: server.modelId,
    openView(claims) {
      const view = new ScriptView([...claims]);
      server.attach(view);
      return {
        ...viewApi(server, view),
        claim: (directory: string) => view.claim(directory),
        close: async () => server.detach(view),
      };
    },
    close: () => server.close(),
  };
}

function viewApi(server: { url: string; modelId: string }, view: ScriptView): Omit<ScriptedModel, "close"> {
  return {
    url: server.url,
    modelId: server.modelId,
    requests: view.requests,
    addRule: (rule: ScriptRule) => view.addRule(rule),
    setFallback: (fallback) => view.setFallback(fallback),
    requestsFor: (sessionId) => view.requestsFor(sessionId),
    reset: () => view.reset(),
  };
}

interface RoutingServer {
  url: string;
  modelId: string;
  attach(view: ScriptView): void;
  detach(view: ScriptView): void;
  close(): Promise<void>;
}

async function startScriptedModelServer(options: ScriptedModelOptions): Promise<RoutingServer> {
  const modelId = options.modelId ?? "scripted";
  const open: ScriptView[] = [];
  const closedClaims: string[][] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });
  // The client (opencode's fetch) closes its idle connections, not the server: a server that
  // closes one after 5 s (Node's default) races a request sent on it at that moment, which
  // opencode reports as "HTTP transport failed" and ends the turn (seen once under a full bench).
  server.keepAliveTimeout = 10 * 60_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (req.method === "GET" && path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: modelId, object: "model", owned_by: "scripted" }] }));
      return;
    }
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
      return;
    }
    const body: unknown = JSON.parse(await readBody(req));
    const header = req.headers["x-session-id"];
    const recorded = parseChatRequest(body, typeof header === "string" ? header : undefined, 0, Date.now());
    const view = routeRequest(open, closedClaims, workingDirectoryOf(recorded.system));
    const turn = view ? view.answer(recorded) : ORPHAN_TURN;
    const forget = view?.onClose(() => res.destroy());

    let closed = false;
    res.on("close", () => {
      closed = true;
      forget?.();
      if (recorded.endedAt === undefined) {
        recorded.aborted = true;
        recorded.abortedAt = Date.now();
      }
    });
    if (turn.holdUntil) await Promise.race([turn.holdUntil, once(res, "close")]).catch(() => undefined);
    if (turn.delayMs) await sleepUnless(turn.delayMs, () => closed);
    if (closed) return;
    if ("httpError" in turn) {
      res.writeHead(turn.httpError.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: turn.httpError.message, type: "scripted_error" } }));
      recorded.endedAt = Date.now();
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const id = `chatcmpl-${recorded.seq}`;
    const chunks = turnChunks(turn, id, modelId, Math.floor(Date.now() / 1000), recorded.includeUsage ? promptTokens(body) : undefined);
    for (const chunk of chunks) {
      if (closed) return;
      res.write(sseFrame(chunk));
      if (turn.chunkDelayMs) await sleepUnless(turn.chunkDelayMs, () => closed);
    }
    if (closed) return;
    recorded.endedAt = Date.now();
    const usage = (chunks.at(-1) as { usage?: TokenUsageReport } | undefined)?.usage;
    if (usage) recorded.usage = usage;
    res.end(sseFrame("[DONE]"));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    modelId,
    attach: (view) => open.push(view),
    detach(view) {
      const index = open.indexOf(view);
      if (index < 0) return;
      open.splice(index, 1);
      if (view.claims !== "all") closedClaims.push([...view.claims]);
      view.close();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Sleeps in small steps so a hung-up caller frees the handler promptly. */
async function sleepUnless(ms: number, stop: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!stop() && Date.now() < until) {
    await new Promise((r) => setTimeout(r, Math.min(50, until - Date.now())));
  }
}
