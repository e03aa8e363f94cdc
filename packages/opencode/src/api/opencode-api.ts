import type { z } from "zod";
import { OpencodeContractError } from "../errors/opencode-contract.error.ts";
import { OpencodeHttpError } from "../errors/opencode-http.error.ts";
import type { OpencodeHttp } from "../http/opencode-http.ts";
import type { ModelRef } from "../model/model-ref.ts";
import {
  activeSchema,
  admittedSchema,
  docSchema,
  healthSchema,
  serverConfigSchema,
  historySchema,
  messagesSchema,
  modelListSchema,
  permissionListSchema,
  questionListSchema,
  sessionInfoSchema,
  type PermissionRequest,
  type QuestionRequest,
  type SessionMessage,
} from "./api-schemas.ts";

/** Every route this client calls, as listed in the server's OpenAPI `/doc`. */
export const REQUIRED_ROUTES: ReadonlyArray<readonly [method: string, path: string]> = [
  ["get", "/global/health"],
  ["post", "/api/session"],
  ["get", "/api/session/active"],
  ["post", "/api/session/{sessionID}/prompt"],
  ["get", "/api/session/{sessionID}/message"],
  ["get", "/api/session/{sessionID}/history"],
  ["get", "/api/event"],
  ["post", "/api/session/{sessionID}/interrupt"],
  ["get", "/api/session/{sessionID}/permission"],
  ["post", "/api/session/{sessionID}/permission/{requestID}/reply"],
  ["get", "/api/session/{sessionID}/question"],
  ["post", "/api/session/{sessionID}/question/{requestID}/reply"],
  ["post", "/api/session/{sessionID}/question/{requestID}/reject"],
  ["get", "/api/model"],
  ["get", "/api/provider/{providerID}"],
];

const enc = encodeURIComponent;

/** Typed wrappers over opencode serve's v2 routes (`/api/*`). */
export class OpencodeApi {
  constructor(readonly http: OpencodeHttp) {}

  private async call<T>(schema: z.ZodType<T>, method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal, timeoutMs?: number): Promise<T> {
    const raw = await this.http.json(method, path, body, signal, timeoutMs);
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw new OpencodeContractError(this.http.baseUrl, `unexpected response to ${method} ${path}: ${parsed.error.message.slice(0, 300)}`);
    return parsed.data;
  }

  health(signal?: AbortSignal) {
    return this.call(healthSchema, "GET", "/global/health", undefined, signal);
  }

  /** The server's merged configuration (only what the start-up check reads). */
  config(signal?: AbortSignal) {
    return this.call(serverConfigSchema, "GET", "/config", undefined, signal);
  }

  async routes(signal?: AbortSignal): Promise<Set<string>> {
    const doc = await this.call(docSchema, "GET", "/doc", undefined, signal);
    const out = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) for (const m of Object.keys(methods)) out.add(`${m.toLowerCase()} ${path}`);
    return out;
  }

  /** `timeoutMs` overrides the request timeout (a run waits for a stalled server up to its own deadline). */
  async createSession(input: { agent: string; directory: string; model?: ModelRef }, signal?: AbortSignal, timeoutMs?: number) {
    const body = { agent: input.agent, location: { directory: input.directory }, ...(input.model ? { model: input.model } : {}) };
    return (await this.call(sessionInfoSchema, "POST", "/api/session", body, signal, timeoutMs)).data;
  }

  /** The session's info; OpencodeHttpError 404 when this server does not hold it. */
  async session(sessionId: string, signal?: AbortSignal) {
    return (await this.call(sessionInfoSchema, "GET", `/api/session/${enc(sessionId)}`, undefined, signal)).data;
  }

  async prompt(sessionId: string, text: string, signal?: AbortSignal, timeoutMs?: number) {
    return (await this.call(admittedSchema, "POST", `/api/session/${enc(sessionId)}/prompt`, { prompt: { text } }, signal, timeoutMs)).data;
  }

  /** Ids of sessions with a running turn (one request covers every session on the server). */
  async active(signal?: AbortSignal): Promise<Set<string>> {
    return new Set(Object.keys((await this.call(activeSchema, "GET", "/api/session/active", undefined, signal)).data));
  }

  /** Newest first. */
  async messages(sessionId: string, limit: number, signal?: AbortSignal): Promise<SessionMessage[]> {
    return (await this.call(messagesSchema, "GET", `/api/session/${enc(sessionId)}/message?order=desc&limit=${limit}`, undefined, signal)).data;
  }

  /** One page of the session's durable events after sequence `after` (exclusive), oldest first. */
  async history(sessionId: string, after: number | undefined, signal?: AbortSignal) {
    const from = after === undefined ? "" : `&after=${after}`;
    return this.call(historySchema, "GET", `/api/session/${enc(sessionId)}/history?limit=100${from}`, undefined, signal);
  }

  async interrupt(sessionId: string, signal?: AbortSignal): Promise<void> {
    await this.http.json("POST", `/api/session/${enc(sessionId)}/interrupt`, undefined, signal);
  }

  async permissions(sessionId: string, signal?: AbortSignal): Promise<PermissionRequest[]> {
    return (await this.call(permissionListSchema, "GET", `/api/session/${enc(sessionId)}/permission`, undefined, signal)).data;
  }

  async replyPermission(sessionId: string, requestId: string, reply: "once" | "always" | "reject", message?: string, signal?: AbortSignal) {
    const body = message ? { reply, message } : { reply };
    await this.http.json("POST", `/api/session/${enc(sessionId)}/permission/${enc(requestId)}/reply`, body, signal);
  }

  async questions(sessionId: string, signal?: AbortSignal): Promise<QuestionRequest[]> {
    return (await this.call(questionListSchema, "GET", `/api/session/${enc(sessionId)}/question`, undefined, signal)).data;
  }

  async replyQuestion(sessionId: string, requestId: string, answers: string[][], signal?: AbortSignal) {
    await this.http.json("POST", `/api/session/${enc(sessionId)}/question/${enc(requestId)}/reply`, { answers }, signal);
  }

  async rejectQuestion(sessionId: string, requestId: string, signal?: AbortSignal) {
    await this.http.json("POST", `/api/session/${enc(sessionId)}/question/${enc(requestId)}/reject`, undefined, signal);
  }

  /**
   * Models the server knows for a directory (empty while that location is still booting). While
   * the location boots its configured providers the list is models.dev's whole catalogue (~8,000
   * models, 4.5 MB): an expensive call, so readiness asks {@link provider} first.
   */
  async models(directory: string, signal?: AbortSignal, timeoutMs?: number) {
    return (await this.call(modelListSchema, "GET", `/api/model?location%5Bdirectory%5D=${enc(directory)}`, undefined, signal, timeoutMs)).data;
  }

  /**
   * Whether the directory's location has loaded a provider (a small answer). False on 404: the
   * location is still booting, or it has no such provider.
   */
  async hasProvider(directory: string, providerId: string, signal?: AbortSignal, timeoutMs?: number): Promise<boolean> {
    try {
      await this.http.json("GET", `/api/provider/${enc(providerId)}?location%5Bdirectory%5D=${enc(directory)}`, undefined, signal, timeoutMs);
      return true;
    } catch (err) {
      if (err instanceof OpencodeHttpError && err.status === 404) return false;
      throw err;
    }
  }
}
