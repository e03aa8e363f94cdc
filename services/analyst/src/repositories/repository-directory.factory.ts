import type { Logger } from "@ratatoskr/runtime";
import type { AnalystConfig } from "../config/analyst.config.ts";
import { GiteaRepositoryDirectory } from "./gitea-repository-directory.ts";
import { LocalRepositoryDirectory } from "./local-repository-directory.ts";
import type { RepositoryDirectory } from "./repository-directory.ts";

/** Gitea when configured, else the local bare repositories, else none (with a warning: nothing is checked). */
export function createRepositoryDirectory(
  config: AnalystConfig["repositories"],
  logger: Pick<Logger, "info" | "warn">,
): RepositoryDirectory | undefined {
  if (config.giteaUrl && config.giteaToken) {
    if (config.localGitRoot)
      logger.info("GITEA_URL and LOCAL_GIT_ROOT are both set: repositories are checked on Gitea");
    return new GiteaRepositoryDirectory({ baseUrl: config.giteaUrl, token: config.giteaToken });
  }
  if (config.localGitRoot) return new LocalRepositoryDirectory(config.localGitRoot);
  logger.warn(
    "neither GITEA_URL nor LOCAL_GIT_ROOT is set: repositories named in drafts are not checked to exist",
  );
  return undefined;
}
