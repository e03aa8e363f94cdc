import { createRequire } from "node:module";
import type * as GiteaJs from "gitea-js";
import type { Api, APIError, Repository } from "gitea-js";
import { RepositoryCheckError, type RepositoryDirectory } from "./repository-directory.ts";

export interface GiteaRepositoryDirectoryOptions {
  /** Gitea root URL, e.g. `https://git.example.com` (without `/api/v1`). */
  baseUrl: string;
  token: string;
  /** Bound on one lookup (ms), default 10_000. */
  requestTimeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** gitea-js is required by the first directory: a process without Gitea never loads it. */
const giteaJs = (): typeof GiteaJs => createRequire(import.meta.url)("gitea-js") as typeof GiteaJs;

/** gitea-js throws the Response itself (with the parsed body in `error`) for non-2xx answers. */
function isHttpResponse(value: unknown): value is Response & { error: APIError | null } {
  return value instanceof Response;
}

/** Repositories on a Gitea server: `GET /api/v1/repos/{owner}/{repo}` (200 exists, 404 does not). */
export class GiteaRepositoryDirectory implements RepositoryDirectory {
  readonly description: string;
  private readonly api: Api<unknown>;
  private readonly timeoutMs: number;

  constructor(options: GiteaRepositoryDirectoryOptions) {
    const root = options.baseUrl.replace(/\/+$/, "");
    this.description = `gitea ${root}`;
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.api = new (giteaJs().Api)({
      baseUrl: `${root}/api/v1`,
      baseApiParams: { format: "json", headers: { Authorization: `token ${options.token}` } },
    });
  }

  async exists(fullName: `${string}/${string}`, signal?: AbortSignal): Promise<boolean> {
    const [owner = "", repo = ""] = fullName.split("/");
    const timeout = AbortSignal.timeout(this.timeoutMs);
    try {
      const response = await this.api.repos.repoGet(owner, repo, {
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const found: Repository = response.data;
      return typeof found.full_name === "string";
    } catch (err) {
      if (isHttpResponse(err)) {
        if (err.status === 404) return false;
        const detail = err.error?.message ? `: ${err.error.message}` : "";
        const hint = err.status === 401 || err.status === 403 ? " (check GITEA_TOKEN)" : "";
        throw new RepositoryCheckError(`Gitea answered ${err.status} for ${fullName}${detail}${hint}`);
      }
      const message = err instanceof Error ? err.message : String(err);
      throw new RepositoryCheckError(
        `Gitea at ${this.description} could not be asked about ${fullName}: ${message}`,
        {
          cause: err,
        },
      );
    }
  }
}
