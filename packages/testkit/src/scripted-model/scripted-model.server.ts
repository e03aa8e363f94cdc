import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseChatRequest, promptTokens } from "./chat-request.ts";
import { ScriptEngine } from "./script-engine.ts";
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

/** Starts an OpenAI-compatible model on loopback that answers from a script. */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const modelId = options.modelId ?? "scripted";
  const engine = new ScriptEngine();
  const requests: ModelRequest[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });
  server.keepAliveTimeout = 5_000;

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
    const recorded = parseChatRequest(body, typeof header === "string" ? header : undefined, requests.length + 1, Date.now());
    const choice = engine.choose(recorded);
    recorded.answeredBy = choice.answeredBy;
    recorded.turnIndex = choice.turnIndex;
    requests.push(recorded);

    let closed = false;
    res.on("close", () => {
      closed = true;
      if (recorded.endedAt === undefined) {
        recorded.aborted = true;
        recorded.abortedAt = Date.now();
      }
    });
    const turn = choice.turn;
    await turn.holdUntil?.catch(() => undefined);
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
    requests,
    addRule: (rule) => engine.add(rule),
    setFallback: (fallback) => engine.setFallback(fallback),
    requestsFor: (sessionId) => requests.filter((r) => r.sessionId === sessionId),
    reset() {
      engine.reset();
      requests.length = 0;
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
