import { createRequire } from "node:module";
import type * as Undici from "undici";
import type { Dispatcher } from "undici";

/**
 * undici's index loads on the first Gitea client, not with this package: it brings fetch,
 * WebSocket, the caches and the mocks (3.8 MB of heap), which a process without Gitea never uses.
 */
let undici: typeof Undici | undefined;
const loadUndici = (): typeof Undici =>
  (undici ??= createRequire(import.meta.url)("undici") as typeof Undici);

export interface RetryPolicy {
  /** Retries after the first attempt. Default 4. */
  maxRetries?: number;
  /** First back-off (ms), doubled each retry up to `maxTimeoutMs`. Default 200. */
  minTimeoutMs?: number;
  maxTimeoutMs?: number;
}

/**
 * An undici dispatcher that retries 5xx, 429 (honouring Retry-After) and network errors with
 * exponential back-off. POST is left out on purpose: a comment or PR created by a request whose
 * answer was lost would be created twice; callers recover those by looking first.
 */
export function retryingDispatcher(policy: RetryPolicy = {}, base?: Dispatcher): Undici.RetryAgent {
  const { Agent, RetryAgent } = loadUndici();
  return new RetryAgent(base ?? new Agent(), {
    maxRetries: policy.maxRetries ?? 4,
    minTimeout: policy.minTimeoutMs ?? 200,
    maxTimeout: policy.maxTimeoutMs ?? 5_000,
    timeoutFactor: 2,
    methods: ["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"],
    statusCodes: [429, 500, 502, 503, 504],
    // After the last retry the error answer itself comes back, so the caller can name the status.
    throwOnError: false,
  });
}

/** A `fetch` for gitea-js that goes through `dispatcher`. */
export function fetchVia(dispatcher: Dispatcher): typeof fetch {
  const viaDispatcher = (
    input: Parameters<typeof Undici.fetch>[0],
    init?: Parameters<typeof Undici.fetch>[1],
  ) => loadUndici().fetch(input, { ...init, dispatcher });
  return viaDispatcher as unknown as typeof fetch;
}
