import { Agent, fetch as undiciFetch, RetryAgent, type Dispatcher } from "undici";

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
export function retryingDispatcher(policy: RetryPolicy = {}, base: Dispatcher = new Agent()): RetryAgent {
  return new RetryAgent(base, {
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
    input: Parameters<typeof undiciFetch>[0],
    init?: Parameters<typeof undiciFetch>[1],
  ) => undiciFetch(input, { ...init, dispatcher });
  return viaDispatcher as unknown as typeof fetch;
}
