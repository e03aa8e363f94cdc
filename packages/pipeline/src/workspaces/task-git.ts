import { createGitWorkspaces, type GitLogger, type GitWorkspaces } from "@ratatoskr/git";
import { NO_GIT_HOST, remoteSpecOf, type GitHostConfig } from "../config/git-host.config.ts";

/**
 * The git workspaces of a service that works on task repositories, under `root` (a service's own
 * subdirectory of WORKSPACE_DIR). Without a configured host every operation fails with
 * {@link NO_GIT_HOST}, so the service starts and the person is told why the task failed.
 */
export function createTaskGit(config: GitHostConfig, root: string, logger: GitLogger): GitWorkspaces {
  const remote = remoteSpecOf(config);
  if (remote) return createGitWorkspaces({ root, remote, logger, retentionMs: config.retentionMs });
  logger.warn({}, NO_GIT_HOST);
  // Every operation refuses, whatever the interface grows to: no host, no repositories.
  return new Proxy({} as GitWorkspaces, {
    get: () => () => {
      throw new Error(NO_GIT_HOST);
    },
  });
}
