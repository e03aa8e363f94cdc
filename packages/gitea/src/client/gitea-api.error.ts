/** 4xx except 408/429: the request itself is wrong and repeating it cannot help. */
function isPermanentStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/**
 * Gitea answered a call with an error status (after the retries for 5xx/429). Names the call and
 * its target, never the token. `permanent` tells job workers not to retry a 4xx.
 */
export class GiteaApiError extends Error {
  override readonly name = "GiteaApiError";
  readonly permanent: boolean;

  constructor(
    /** The gitea-js operation, e.g. `issueCreateComment`. */
    readonly call: string,
    /** What it was about, e.g. `acme/web#3`. */
    readonly target: string,
    readonly status: number,
    readonly detail: string | undefined,
  ) {
    super(`Gitea ${call} (${target}) answered ${status}${detail ? `: ${detail}` : ""}`);
    this.permanent = isPermanentStatus(status);
  }
}

/** Gitea could not be reached at all (network error or timeout, after retries). Transient. */
export class GiteaUnavailableError extends Error {
  override readonly name = "GiteaUnavailableError";
  readonly permanent = false;

  constructor(
    readonly call: string,
    readonly target: string,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Gitea ${call} (${target}) could not be reached: ${reason}`, { cause });
  }
}

/**
 * Gitea answered, but with something no Gitea sends (an answer nested past any real one): refused
 * before anything walks it. Transient, as a broken server or proxy may answer properly again.
 */
export class GiteaAnswerError extends Error {
  override readonly name = "GiteaAnswerError";
  readonly permanent = false;

  constructor(
    readonly call: string,
    readonly target: string,
    why: string,
  ) {
    super(`Gitea ${call} (${target}) answered with something no Gitea sends: ${why}`);
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof GiteaApiError && err.status === 404;
}
