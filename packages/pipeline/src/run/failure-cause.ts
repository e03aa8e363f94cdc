import type { KnownFailureCause } from "@ratatoskr/contracts";
import { GitWorkspaceError, type GitWorkspaceErrorCode } from "@ratatoskr/git";

const BY_GIT_CODE: Partial<Record<GitWorkspaceErrorCode, KnownFailureCause>> = {
  "repo-not-found": "repo-not-found",
  "invalid-repo-name": "repo-not-found",
  "auth-failed": "auth-refused",
  "push-rejected": "push-rejected",
};

/** The known cause of a step's failure, when the error says it for certain (see `KNOWN_FAILURE_CAUSES`). */
export function knownFailureCause(err: unknown): { cause: KnownFailureCause } | Record<string, never> {
  const cause = err instanceof GitWorkspaceError ? BY_GIT_CODE[err.code] : undefined;
  return cause ? { cause } : {};
}
