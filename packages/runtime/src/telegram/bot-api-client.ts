import http from "node:http";
import https from "node:https";

/** A Bot API answer with `ok: false`. */
export interface BotApiFailure {
  ok: false;
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/**
 * Telegram refused a call. The answer is kept whole in `response`, as telegraf's TelegramError
 * keeps it, so error classification reads `response.error_code` and `response.parameters`.
 */
export class BotApiError extends Error {
  override readonly name = "BotApiError";
  constructor(
    readonly method: string,
    readonly response: BotApiFailure,
  ) {
    super(`${method}: ${response.error_code}: ${response.description}`);
  }
}

/** Calls Bot API methods with a JSON payload and returns their `result`. */
export interface BotApiClient {
  call<T>(method: string, payload: object, signal?: AbortSignal): Promise<T>;
}

const SILENT_CONNECTION_MS = 500_000;

/** Fields set to null or undefined are left out of the payload, as telegraf leaves them out. */
const withoutNulls = (_key: string, value: unknown): unknown => (value === null ? undefined : value);

/**
 * The Bot API over node's own http(s): JSON in, `result` out, a BotApiError for an `ok: false`
 * answer, transport errors as node raises them (their `code`s tell whether the request left).
 * It replaces telegraf's client, whose node-fetch, whatwg-url and method table cost 2.1 MB of
 * heap in every process that polls or sends (measured in plain node). `apiRoot` points it at a
 * local Bot API server or a fake (plain http).
 */
export function createBotApiClient(token: string, apiRoot = "https://api.telegram.org"): BotApiClient {
  const secure = apiRoot.startsWith("https:");
  const transport = secure ? https : http;
  // Kept-alive connections, as telegraf kept them (it gave https its own keep-alive agent).
  const agent = secure ? new https.Agent({ keepAlive: true, keepAliveMsecs: 10_000 }) : http.globalAgent;
  return {
    call<T>(method: string, payload: object, signal?: AbortSignal): Promise<T> {
      const body = JSON.stringify(payload, withoutNulls);
      return new Promise<T>((resolve, reject) => {
        const options = {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
          ...(signal ? { signal } : {}),
        };
        // Resolved against apiRoot as telegraf resolves it.
        const url = new URL(`./bot${token}/${method}`, apiRoot);
        const request = transport.request(url, options, (response) => {
          const status = response.statusCode ?? 0;
          if (status >= 500) {
            // telegraf's rule: a 5xx is a failure whatever its body (often a proxy's HTML page).
            response.resume();
            reject(
              new BotApiError(method, {
                ok: false,
                error_code: status,
                description: response.statusMessage ?? "",
              }),
            );
            return;
          }
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () => {
            try {
              resolve(resultOf<T>(method, JSON.parse(Buffer.concat(chunks).toString("utf8"))));
            } catch (err) {
              reject(err as Error);
            }
          });
        });
        // A connection that went silent fails the call instead of hanging it (a long poll waits
        // 50 s at most); telegraf's fetch gave up after the same 500 s.
        request.setTimeout(SILENT_CONNECTION_MS, () =>
          request.destroy(
            Object.assign(new Error(`${method}: no answer within ${SILENT_CONNECTION_MS} ms`), {
              code: "ETIMEDOUT",
            }),
          ),
        );
        request.on("error", (err) => reject(redacted(err, token)));
        request.end(body);
      });
    },
  };
}

/** The token never leaves in an error message (telegraf redacted it too). */
function redacted(err: Error, token: string): Error {
  if (err.message.includes(token)) err.message = err.message.replaceAll(token, "[REDACTED]");
  return err;
}

function resultOf<T>(method: string, answer: unknown): T {
  const record =
    answer !== null && typeof answer === "object" ? (answer as Record<string, unknown>) : undefined;
  if (record?.ok === true) return record.result as T;
  if (typeof record?.error_code === "number")
    throw new BotApiError(method, record as unknown as BotApiFailure);
  throw new Error(`${method}: not a Bot API answer`);
}
