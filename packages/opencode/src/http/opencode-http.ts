import { MAX_INPUT_DEPTH, nestedDeeperThan } from "@ratatoskr/runtime";
import type { Dispatcher } from "undici";
import { request } from "./undici-core.ts";
import { OpencodeContractError } from "../errors/opencode-contract.error.ts";
import { OpencodeHttpError } from "../errors/opencode-http.error.ts";
import { OpencodeUnavailableError } from "../errors/opencode-unavailable.error.ts";

export interface OpencodeHttpOptions {
  baseUrl: string;
  /** Basic-auth password for user "opencode"; omit for an unsecured loopback server. */
  password?: string;
  dispatcher: Dispatcher;
  /** Per-request timeout for ordinary (non-streaming) calls, ms. */
  requestTimeoutMs?: number;
}

/** JSON over HTTP to one opencode server: auth, timeouts, typed errors. */
export class OpencodeHttp {
  readonly baseUrl: string;
  private readonly auth: string | undefined;
  private readonly dispatcher: Dispatcher;
  private readonly timeoutMs: number;

  constructor(options: OpencodeHttpOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.auth = options.password ? `Basic ${Buffer.from(`opencode:${options.password}`).toString("base64")}` : undefined;
    this.dispatcher = options.dispatcher;
    this.timeoutMs = options.requestTimeoutMs ?? 15_000;
  }

  /**
   * Sends a request and returns the parsed JSON body (undefined for 204/empty). `timeoutMs`
   * overrides the client's request timeout (a call that may legitimately take long, e.g. one that
   * waits for the server to boot a directory).
   */
  async json(method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal, timeoutMs = this.timeoutMs): Promise<unknown> {
    const res = await this.send(method, path, body, signal, timeoutMs);
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode > 299) throw new OpencodeHttpError(method, path, res.statusCode, text);
    if (!text) return undefined;
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new OpencodeContractError(this.baseUrl, `the answer to ${method} ${path} is not JSON`);
    }
    // Answers are walked afterwards (schemas, logs, traces): refused before anything recurses.
    if (nestedDeeperThan(answer))
      throw new OpencodeContractError(this.baseUrl, `the answer to ${method} ${path} nests deeper than ${MAX_INPUT_DEPTH} levels`);
    return answer;
  }

  /** Opens a streaming GET and calls `onChunk` for each piece of body text until it ends or `signal` aborts. */
  async stream(path: string, signal: AbortSignal, onChunk: (text: string) => void): Promise<void> {
    const res = await this.send("GET", path, undefined, signal, 0, { accept: "text/event-stream" });
    // An unknown path answers 200 with opencode's web UI (HTML): only an event stream counts as live.
    const type = String(res.headers["content-type"] ?? "");
    if (res.statusCode !== 200 || !type.includes("text/event-stream")) {
      await res.body.dump();
      throw new OpencodeHttpError("GET", path, res.statusCode, res.statusCode === 200 ? `not an event stream (${type || "no content type"})` : "");
    }
    // undici yields Buffers whatever the encoding: decode in streaming mode so a multi-byte
    // character split across chunks survives.
    const decoder = new TextDecoder();
    for await (const chunk of res.body) onChunk(decoder.decode(chunk as Uint8Array, { stream: true }));
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    extraHeaders: Record<string, string> = {},
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { ...extraHeaders };
    if (this.auth) headers["authorization"] = this.auth;
    if (body !== undefined) headers["content-type"] = "application/json";
    try {
      return await request(this.baseUrl + path, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: this.dispatcher,
        signal,
        headersTimeout: timeoutMs || undefined,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new OpencodeUnavailableError(this.baseUrl, describeNetworkError(err));
    }
  }
}

function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  const message = e.message || e.cause?.message || String(err);
  return code && !message.includes(code) ? `${code} ${message}` : message;
}
