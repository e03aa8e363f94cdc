/**
 * @ratatoskr/git — task workspaces on real git: clone once per task and repository, a task
 * branch, whole-branch diffs, commit, push without force, retention sweep.
 *
 * Credentials reach git only through the environment of each network git command
 * (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` → `http.<baseUrl>/.extraHeader`),
 * never in a URL, argv, log line or `.git/config`.
 */
export { createGitWorkspaces } from "./git-workspaces.ts";
export type { GitWorkspaces, GitWorkspacesOptions, PrepareInput, PushResult, Workspace } from "./git-workspaces.ts";
export type { SweepResult } from "./workspace-sweep.ts";
export type { GitLogger } from "./git-logger.ts";
export type { GitAuthor } from "./git-env.ts";
export { remoteUrl, type RemoteSpec } from "./remote-spec.ts";
export {
  describeMovedRef,
  movedRefs,
  movedRefsReason,
  parseLsRemote,
  readOnlyBreachReason,
  watchRemoteRefs,
  watchTrees,
  type MovedRef,
  type RemoteRefs,
  type RemoteRefWatch,
  type TreeWatch,
} from "./remote-refs.ts";
export { NO_PUSH_REMOTE } from "./git-dir-guard.ts";
export { validateRepoName, type RepoRef } from "./repo-name.ts";
export { branchName, commitMessage, roundTrailer, slugify } from "./branch-name.ts";
export {
  GitWorkspaceError,
  InvalidRepoNameError,
  RepoNotFoundError,
  GitHostUnreachableError,
  GitAuthError,
  PushRejectedError,
  WorkspaceIoError,
  GitCommandError,
  type GitWorkspaceErrorCode,
} from "./errors/git-workspace.error.ts";
