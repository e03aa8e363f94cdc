import path from "node:path";
import type { RepoRef } from "./repo-name.ts";

/** Where the repositories live. */
export type RemoteSpec =
  /** Bare repositories at `<root>/<owner>/<name>.git` (demo, tests). */
  | { readonly kind: "local"; readonly root: string }
  /** A smart-HTTP git host such as Gitea: `<baseUrl>/<owner>/<name>.git`, basic auth with a token. */
  | { readonly kind: "http"; readonly baseUrl: string; readonly username: string; readonly token: string };

/** The repository's URL as git sees it; it never carries credentials. */
export function remoteUrl(remote: RemoteSpec, repo: RepoRef): string {
  if (remote.kind === "local") return path.join(path.resolve(remote.root), repo.owner, `${repo.name}.git`);
  return `${stripSlash(remote.baseUrl)}/${repo.owner}/${repo.name}.git`;
}

/** What a person reads in messages and logs: the host URL, never credentials. */
export function describeRemote(remote: RemoteSpec): string {
  return remote.kind === "local" ? `local ${path.resolve(remote.root)}` : stripSlash(remote.baseUrl);
}

export function stripSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
