/** Where the repositories a draft names must exist (T3: checked before a draft is ready). */
export interface RepositoryDirectory {
  /** Human-readable kind for logs, e.g. "gitea https://git.example" or "local /srv/git". */
  readonly description: string;
  /**
   * True when `owner/name` exists and is visible to us, false when it does not. Throws
   * RepositoryCheckError when the answer is unknown (host down, credentials refused).
   */
  exists(fullName: `${string}/${string}`, signal?: AbortSignal): Promise<boolean>;
}

/** The host could not say whether a repository exists; the job is retried. */
export class RepositoryCheckError extends Error {
  override readonly name = "RepositoryCheckError";
}
