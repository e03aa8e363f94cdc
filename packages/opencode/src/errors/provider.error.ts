import { AgentMessageError } from "./agent-message.error.ts";

/**
 * The model provider refused or failed the request (opencode already retried what it retries).
 * One kind for every provider failure: `retryable` says whether a later attempt can help (5xx,
 * 429, network) or an operator must act (401/403 credentials, 400/404 request or model).
 */
export class ProviderError extends AgentMessageError {
  override readonly name: string = "ProviderError";
  constructor(
    sessionId: string,
    readonly provider: string | undefined,
    /** HTTP status of the provider's answer; undefined when it never answered. */
    readonly status: number | undefined,
    readonly retryable: boolean,
    readonly detail: string,
  ) {
    super(sessionId, describe(provider, status, retryable, detail));
  }
}

function describe(provider: string | undefined, status: number | undefined, retryable: boolean, detail: string): string {
  const who = `provider ${provider ?? "(unknown)"}`;
  if (status === 401 || status === 403)
    return `${who} rejected the credentials (HTTP ${status}): check its API key in the opencode server's config; not retried. ${detail}`;
  return `${who} failed${status ? ` with HTTP ${status}` : ""}${retryable ? " (retryable)" : " (not retryable)"}: ${detail}`;
}
