import { isFullRepoName } from "../draft/repo-name.ts";
import type { RepositoryDirectory } from "./repository-directory.ts";

/**
 * The repositories of `names` that do not exist, in the given order. Names that are not
 * `owner/name` count as missing without asking the host. Without a directory (none configured)
 * nothing is checked.
 */
export async function findMissingRepositories(
  directory: RepositoryDirectory | undefined,
  names: readonly string[],
  signal?: AbortSignal,
): Promise<string[]> {
  if (!directory) return [];
  const found = await Promise.all(
    names.map((name) => (isFullRepoName(name) ? directory.exists(name, signal) : false)),
  );
  return names.filter((_, index) => !found[index]);
}
