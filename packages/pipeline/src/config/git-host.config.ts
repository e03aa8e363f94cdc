import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, envDurationMs, envString, envUrl } from "@ratatoskr/runtime";
import type { RemoteSpec } from "@ratatoskr/git";

/** WORKSPACE_DIR: one definition for every service that gives agents working directories. */
export const WORKSPACE_DIR_VAR = envString("WORKSPACE_DIR", {
  default: join(tmpdir(), "ratatoskr-workspaces"),
  description: "Root of the per-task working directories agent sessions run in",
});

export const GITEA_URL_VAR = envUrl("GITEA_URL", {
  optional: true,
  protocols: ["https", "http"],
  description: "Gitea server (root URL) holding the repositories tasks work on",
});

export const GITEA_TOKEN_VAR = envString("GITEA_TOKEN", {
  optional: true,
  secret: true,
  description: "Gitea API token of the bot account; required with GITEA_URL",
});

export const LOCAL_GIT_ROOT_VAR = envString("LOCAL_GIT_ROOT", {
  optional: true,
  description:
    "Directory of bare repositories <owner>/<name>.git standing in for a git host when GITEA_URL is unset (demo mode)",
});

/**
 * Where task repositories live and where their working trees go: the variables the dev and
 * reviewer services share (the analyst and postmortem read the same definitions, so the README
 * table lists each once).
 */
export const GIT_HOST_CONFIG_SCHEMA = {
  workspaceDir: WORKSPACE_DIR_VAR,
  giteaUrl: GITEA_URL_VAR,
  giteaToken: GITEA_TOKEN_VAR,
  giteaUser: envString("GITEA_GIT_USER", {
    default: "ratatoskr",
    description: "User name git sends with GITEA_TOKEN when it clones and pushes over HTTP",
  }),
  localGitRoot: LOCAL_GIT_ROOT_VAR,
  retentionMs: envDurationMs("WORKSPACE_RETENTION_MS", {
    default: 86_400_000,
    description: "How long a finished task's working trees are kept before the sweep removes them",
  }),
  workspaceSweepIntervalMs: envDurationMs("WORKSPACE_SWEEP_INTERVAL_MS", {
    default: 600_000,
    description: "How often the working trees of ended tasks are marked finished and those past WORKSPACE_RETENTION_MS removed",
  }),
};

export interface GitHostConfig {
  workspaceDir: string;
  giteaUrl?: string | undefined;
  giteaToken?: string | undefined;
  giteaUser: string;
  localGitRoot?: string | undefined;
  retentionMs: number;
  /** How often the workspace release runs (see workspace-release.ts); default 10 min. */
  workspaceSweepIntervalMs?: number;
}

/** Why there is no git host: said at start-up and by every task that would need one. */
export const NO_GIT_HOST = "no git host is configured: set GITEA_URL (with GITEA_TOKEN) or LOCAL_GIT_ROOT";

/**
 * The remote the configuration names: Gitea over HTTP when GITEA_URL is set, else local bare
 * repositories, else undefined (the service still starts; its tasks fail saying why).
 */
export function remoteSpecOf(config: GitHostConfig): RemoteSpec | undefined {
  if (config.giteaUrl) {
    if (!config.giteaToken) {
      throw new ConfigError([{ name: "GITEA_TOKEN", message: "is required when GITEA_URL is set" }]);
    }
    return { kind: "http", baseUrl: config.giteaUrl, username: config.giteaUser, token: config.giteaToken };
  }
  if (config.localGitRoot) return { kind: "local", root: config.localGitRoot };
  return undefined;
}
