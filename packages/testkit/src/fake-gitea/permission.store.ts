import type { Repository } from "gitea-js";

export type FakePermission = "none" | "read" | "write" | "admin" | "owner";

/** Collaborator permissions per repository; the repository's owner is `owner`, others `none`. */
export class PermissionStore {
  private readonly levels = new Map<string, FakePermission>();

  set(repoFullName: string, login: string, level: FakePermission): void {
    this.levels.set(`${repoFullName}:${login}`.toLowerCase(), level);
  }

  of(repo: Repository, login: string): FakePermission {
    if (repo.owner?.login?.toLowerCase() === login.toLowerCase()) return "owner";
    return this.levels.get(`${repo.full_name}:${login}`.toLowerCase()) ?? "none";
  }
}
