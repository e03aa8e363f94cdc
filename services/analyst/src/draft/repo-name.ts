/** `owner/name` as Gitea spells repositories (letters, digits, `-`, `_`, `.`). */
const FULL_NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/**
 * A repository as the model or the person wrote it, reduced to `owner/name` where possible:
 * a clone/web URL keeps its path, a trailing `.git` and stray slashes go.
 */
export function normalizeRepoName(raw: string): string {
  let name = raw.trim();
  if (/^https?:\/\//i.test(name) && URL.canParse(name)) name = new URL(name).pathname;
  return name.replace(/^\/+|\/+$/g, "").replace(/\.git$/i, "");
}

export function isFullRepoName(name: string): name is `${string}/${string}` {
  return FULL_NAME.test(name) && !name.split("/").some((part) => part === "." || part === "..");
}
