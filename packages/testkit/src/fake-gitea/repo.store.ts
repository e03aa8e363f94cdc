import type { Repository, User } from "gitea-js";

/** What a test may set on a repository; everything else gets plausible defaults. */
export type RepoOverrides = Partial<Omit<Repository, "full_name" | "name" | "owner">>;

/** Repositories of the fake, keyed case-insensitively by `owner/name` as Gitea looks them up. */
export class RepoStore {
  private readonly repos = new Map<string, Repository>();
  private nextId = 1;

  constructor(private readonly baseUrl: () => string) {}

  add(fullName: string, overrides: RepoOverrides = {}): Repository {
    const [owner, name] = fullName.split("/");
    if (!owner || !name) throw new Error(`repository must be "owner/name", got "${fullName}"`);
    const id = this.nextId++;
    const base = this.baseUrl();
    const ownerUser: User = { id: 1000 + id, login: owner, username: owner, full_name: owner } as User;
    const repo: Repository = {
      id,
      name,
      full_name: `${owner}/${name}`,
      owner: ownerUser,
      description: "",
      private: true,
      fork: false,
      empty: false,
      archived: false,
      default_branch: "main",
      html_url: `${base}/${owner}/${name}`,
      clone_url: `${base}/${owner}/${name}.git`,
      url: `${base}/api/v1/repos/${owner}/${name}`,
      permissions: { admin: false, push: true, pull: true },
      created_at: new Date(0).toISOString(),
      updated_at: new Date(0).toISOString(),
      ...overrides,
    };
    this.repos.set(fullName.toLowerCase(), repo);
    return repo;
  }

  remove(fullName: string): boolean {
    return this.repos.delete(fullName.toLowerCase());
  }

  find(owner: string, name: string): Repository | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }
}
