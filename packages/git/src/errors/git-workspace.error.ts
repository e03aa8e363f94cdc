/** Stable error codes callers switch on (the dev service maps them to a message for the person). */
export type GitWorkspaceErrorCode =
  | "invalid-repo-name"
  | "repo-not-found"
  | "host-unreachable"
  | "auth-failed"
  | "push-rejected"
  | "workspace-io"
  | "git-failed";

/** Base class of every error this package throws. Messages never contain credentials. */
export abstract class GitWorkspaceError extends Error {
  abstract readonly code: GitWorkspaceErrorCode;
  /** Worth retrying later (network trouble), as opposed to a permanent condition. */
  abstract readonly transient: boolean;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A repository name from a person is not `owner/name` on the configured host. */
export class InvalidRepoNameError extends GitWorkspaceError {
  override readonly name = "InvalidRepoNameError";
  readonly code = "invalid-repo-name";
  readonly transient = false;
}

/** The host answered but has no such repository (or branch). */
export class RepoNotFoundError extends GitWorkspaceError {
  override readonly name = "RepoNotFoundError";
  readonly code = "repo-not-found";
  readonly transient = false;
}

/** The git host could not be reached (DNS, refused connection, timeout, 5xx). */
export class GitHostUnreachableError extends GitWorkspaceError {
  override readonly name = "GitHostUnreachableError";
  readonly code = "host-unreachable";
  readonly transient = true;
}

/** The host refused our credentials (401/403). */
export class GitAuthError extends GitWorkspaceError {
  override readonly name = "GitAuthError";
  readonly code = "auth-failed";
  readonly transient = false;
}

/** The remote branch moved (someone else pushed); we never force, the person decides. */
export class PushRejectedError extends GitWorkspaceError {
  override readonly name = "PushRejectedError";
  readonly code = "push-rejected";
  readonly transient = false;
  constructor(
    readonly branch: string,
    readonly repo: string,
    detail: string,
  ) {
    super(`push of ${branch} to ${repo} was rejected: the remote branch moved (someone else pushed: ${detail}); not forcing`);
  }
}

/** The workspace directory could not be written or removed (disk full, permissions, read-only). */
export class WorkspaceIoError extends GitWorkspaceError {
  override readonly name = "WorkspaceIoError";
  readonly code = "workspace-io";
  readonly transient = false;
}

/** Any other git failure, with git's own message (credentials redacted). */
export class GitCommandError extends GitWorkspaceError {
  override readonly name = "GitCommandError";
  readonly code = "git-failed";
  readonly transient = false;
}
