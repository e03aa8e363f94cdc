import { createRequire } from "node:module";
import { MAX_INPUT_DEPTH, nestedDeeperThan } from "@ratatoskr/contracts";
import type * as GiteaJs from "gitea-js";
import type {
  Api,
  APIError,
  Comment,
  CreatePullRequestOption,
  Issue,
  PullRequest,
  Repository,
  User,
} from "gitea-js";
import type { Dispatcher } from "undici";
import { GiteaAnswerError, GiteaApiError, GiteaUnavailableError } from "./gitea-api.error.ts";
import { fetchVia, retryingDispatcher, type RetryPolicy } from "./retrying-fetch.ts";

/** gitea-js is required by the first client: a process without Gitea never loads it (196 KB of source). */
const giteaJs = (): typeof GiteaJs => createRequire(import.meta.url)("gitea-js") as typeof GiteaJs;

export interface GiteaClientOptions {
  /** Gitea root URL, e.g. `https://git.example.com` (without `/api/v1`). */
  baseUrl: string;
  /** API token of the bot account. Sent in a header only; never part of a message or log. */
  token: string;
  /** Bound on one call including its retries (ms). Default 30_000. */
  requestTimeoutMs?: number;
  retry?: RetryPolicy;
  /** Tests: a dispatcher to send through instead of the retrying agent. */
  dispatcher?: Dispatcher;
}

/** Collaborator permission as Gitea names it. */
export type RepoPermission = "none" | "read" | "write" | "admin" | "owner";

export interface RepoRef {
  owner: string;
  repo: string;
}

/** A failed gitea-js call rejects with the Response itself, `error` holding the parsed body. */
function asErrorResponse(value: unknown): { status: number; error?: APIError | null } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const status = (value as { status?: unknown }).status;
  return typeof status === "number" && "ok" in value
    ? (value as unknown as { status: number; error?: APIError | null })
    : undefined;
}

/** The message of an error answer, when it is one (its body is as untrusted as any answer). */
function detailOf(error: APIError | null | undefined): string | undefined {
  const message: unknown = error?.message;
  return typeof message === "string" ? message : undefined;
}

/**
 * The Gitea API subset Ratatoskr uses, typed by gitea-js, over undici with retries on
 * 5xx/429/network errors. Errors name the call and its target (GiteaApiError on a status,
 * GiteaUnavailableError when unreachable).
 */
export class GiteaClient {
  readonly baseUrl: string;
  private readonly api: Api<unknown>;
  private readonly timeoutMs: number;
  /** Reads in flight by what they read: identical concurrent reads share one request. */
  private readonly reading = new Map<string, Promise<unknown>>();

  constructor(options: GiteaClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.api = new (giteaJs().Api)({
      baseUrl: `${this.baseUrl}/api/v1`,
      customFetch: fetchVia(options.dispatcher ?? retryingDispatcher(options.retry)),
      baseApiParams: { format: "json", headers: { Authorization: `token ${options.token}` } },
    });
  }

  private async call<T>(
    name: string,
    target: string,
    run: (signal: AbortSignal) => Promise<{ data: T }>,
  ): Promise<T> {
    let data: T;
    try {
      ({ data } = await run(AbortSignal.timeout(this.timeoutMs)));
    } catch (err) {
      const failed = asErrorResponse(err);
      if (failed) throw new GiteaApiError(name, target, failed.status, detailOf(failed.error));
      throw new GiteaUnavailableError(name, target, err);
    }
    if (nestedDeeperThan(data)) throw new GiteaAnswerError(name, target, `nested deeper than ${MAX_INPUT_DEPTH} levels`);
    return data;
  }

  /**
   * One request for identical reads asked while it is in flight (a burst of commands on one issue
   * reads its permission and the issue once); nothing is kept after it answers. Callers share the
   * answer and must not change it.
   */
  private shared<T>(key: string, read: () => Promise<T>): Promise<T> {
    const inFlight = this.reading.get(key);
    if (inFlight) return inFlight as Promise<T>;
    const request = read().finally(() => this.reading.delete(key));
    this.reading.set(key, request);
    return request;
  }

  /** The account the token belongs to (the bot). */
  currentUser(): Promise<User> {
    return this.call("userGetCurrent", "token owner", (signal) => this.api.user.userGetCurrent({ signal }));
  }

  getRepo({ owner, repo }: RepoRef): Promise<Repository> {
    return this.call("repoGet", `${owner}/${repo}`, (signal) =>
      this.api.repos.repoGet(owner, repo, { signal }),
    );
  }

  /** The user's permission on the repository; `none` when they are no collaborator (403/404). */
  async permission({ owner, repo }: RepoRef, login: string): Promise<RepoPermission> {
    const target = `${owner}/${repo} for ${login}`;
    const result = await this.shared(`permission ${target}`, () =>
      this.call("repoGetRepoPermissions", target, (signal) =>
        this.api.repos.repoGetRepoPermissions(owner, repo, login, { signal }),
      ),
    ).catch((err: unknown) => {
      if (err instanceof GiteaApiError && (err.status === 403 || err.status === 404))
        return { permission: "none" };
      throw err;
    });
    const level = result.permission ?? "none";
    return (["read", "write", "admin", "owner"].includes(level) ? level : "none") as RepoPermission;
  }

  getIssue({ owner, repo }: RepoRef, index: number): Promise<Issue> {
    const target = `${owner}/${repo}#${index}`;
    return this.shared(`issue ${target}`, () =>
      this.call("issueGetIssue", target, (signal) => this.api.repos.issueGetIssue(owner, repo, index, { signal })),
    );
  }

  listIssueComments({ owner, repo }: RepoRef, index: number): Promise<Comment[]> {
    return this.call("issueGetComments", `${owner}/${repo}#${index}`, (signal) =>
      this.api.repos.issueGetComments(owner, repo, index, {}, { signal }),
    );
  }

  /** Comments of every issue and PR of a repository updated since `since`, oldest first, one page. */
  listRepoComments(
    { owner, repo }: RepoRef,
    query: { since?: string; page?: number; limit?: number },
  ): Promise<Comment[]> {
    return this.call("issueGetRepoComments", `${owner}/${repo}`, (signal) =>
      this.api.repos.issueGetRepoComments(owner, repo, query, { signal }),
    );
  }

  getComment({ owner, repo }: RepoRef, id: number): Promise<Comment> {
    return this.call("issueGetComment", `${owner}/${repo} comment ${id}`, (signal) =>
      this.api.repos.issueGetComment(owner, repo, id, { signal }),
    );
  }

  createComment({ owner, repo }: RepoRef, index: number, body: string): Promise<Comment> {
    return this.call("issueCreateComment", `${owner}/${repo}#${index}`, (signal) =>
      this.api.repos.issueCreateComment(owner, repo, index, { body }, { signal }),
    );
  }

  editComment({ owner, repo }: RepoRef, id: number, body: string): Promise<Comment> {
    return this.call("issueEditComment", `${owner}/${repo} comment ${id}`, (signal) =>
      this.api.repos.issueEditComment(owner, repo, id, { body }, { signal }),
    );
  }

  async deleteComment({ owner, repo }: RepoRef, id: number): Promise<void> {
    await this.call("issueDeleteComment", `${owner}/${repo} comment ${id}`, (signal) =>
      this.api.repos.issueDeleteComment(owner, repo, id, { signal }),
    );
  }

  getPullRequest({ owner, repo }: RepoRef, index: number): Promise<PullRequest> {
    const target = `${owner}/${repo}!${index}`;
    return this.shared(`pull ${target}`, () =>
      this.call("repoGetPullRequest", target, (signal) =>
        this.api.repos.repoGetPullRequest(owner, repo, index, { signal }),
      ),
    );
  }

  listPullRequests(
    { owner, repo }: RepoRef,
    state: "open" | "closed" | "all" = "all",
  ): Promise<PullRequest[]> {
    return this.call("repoListPullRequests", `${owner}/${repo}`, (signal) =>
      this.api.repos.repoListPullRequests(owner, repo, { state, limit: 50 }, { signal }),
    );
  }

  createPullRequest({ owner, repo }: RepoRef, option: CreatePullRequestOption): Promise<PullRequest> {
    return this.call(
      "repoCreatePullRequest",
      `${owner}/${repo} ${option.head ?? ""}→${option.base ?? ""}`,
      (signal) => this.api.repos.repoCreatePullRequest(owner, repo, option, { signal }),
    );
  }
}
