import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import type { Comment, Issue, PullRequest, Repository } from "gitea-js";
import { FaultInjector, type FaultRule } from "./fault.injector.ts";
import { apiError, GITEA_MESSAGES } from "./gitea-api.errors.ts";
import { registerIssueRoutes } from "./issue.routes.ts";
import { IssueStore } from "./issue.store.ts";
import { PermissionStore, type FakePermission } from "./permission.store.ts";
import { registerPullRoutes } from "./pull.routes.ts";
import { registerRepoRoutes } from "./repo.routes.ts";
import { RepoStore, type RepoOverrides } from "./repo.store.ts";
import { WebhookSender, type FakeDelivery } from "./webhook.sender.ts";
import { GitBacking, registerGitRoutes } from "./git.routes.ts";
import { createBareRepo } from "../git-http/bare-repo.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface FakeGiteaOptions {
  /** The API token the fake accepts. Default `fake-gitea-token`. */
  token?: string;
  /** Login of the token's user (the bot account). Default `ratatoskr-bot`. */
  botLogin?: string;
  /**
   * Directory of the bare repositories behind {@link FakeGitea.createRepo} (served over smart
   * HTTP at `<url>/<owner>/<name>.git`). Default: a new temporary directory.
   */
  gitRoot?: string;
}

/** One API call as the fake received it. */
export interface GiteaRequest {
  method: string;
  /** Path without the query string, e.g. `/api/v1/repos/acme/web`. */
  path: string;
  /** Whether the call carried the right token. */
  authorized: boolean;
}

/** The token from `Authorization: token|Bearer …`, basic auth's password, or `?token=` / `?access_token=`, as Gitea reads it. */
function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^(?:token|bearer)\s+(\S+)$/i.exec(header) : null;
  if (match) return match[1];
  // Basic auth with the token as password (what git sends), as Gitea accepts it.
  const basic = header ? /^basic\s+(\S+)$/i.exec(header) : null;
  if (basic?.[1]) return Buffer.from(basic[1], "base64").toString("utf8").split(":").slice(1).join(":");
  const query = request.query as Record<string, string | undefined>;
  return query.token ?? query.access_token;
}

/**
 * A Gitea API server on 127.0.0.1 for tests, answering in Gitea 1.23's shapes (gitea-js types).
 * Every `/api/v1` call needs the token (401 otherwise), as on a private instance. Covers
 * repositories, collaborator permission, issues, comments and pull requests; fires signed
 * `issue_comment` webhooks like Gitea (also for the bot's own comments) and can inject failures.
 */
export class FakeGitea {
  readonly token: string;
  readonly repos: RepoStore;
  readonly issues: IssueStore;
  readonly permissions = new PermissionStore();
  readonly webhooks = new WebhookSender();
  readonly faults = new FaultInjector();
  readonly botLogin: string;
  private readonly log: GiteaRequest[] = [];
  private app: FastifyInstance | undefined;
  private address: string | undefined;
  private git: GitBacking | undefined;
  private ownsGitRoot = false;
  private readonly gitRoot: string | undefined;

  constructor(options: FakeGiteaOptions = {}) {
    this.token = options.token ?? "fake-gitea-token";
    this.repos = new RepoStore(() => this.url);
    this.issues = new IssueStore(() => this.url);
    this.botLogin = options.botLogin ?? "ratatoskr-bot";
    this.gitRoot = options.gitRoot;
  }

  /** The bare repositories behind the fake (after `start`). */
  get gitBacking(): GitBacking {
    if (!this.git) throw new Error("FakeGitea is not started");
    return this.git;
  }

  /**
   * Adds a repository backed by a real bare git repository whose default branch holds `files`
   * (one commit), cloneable and pushable at its `clone_url` with the token as password.
   */
  async createRepo(
    fullName: string,
    files: Record<string, string> = { "README.md": "# fixture\n" },
    overrides?: RepoOverrides,
  ): Promise<Repository> {
    await createBareRepo(this.gitBacking.root, fullName.toLowerCase(), files);
    return this.addRepo(fullName, overrides);
  }

  /** Path of a repository's bare git directory (run git there to see what was pushed). */
  bareDir(fullName: string): string {
    return this.gitBacking.bareDir(fullName);
  }

  /** A person merges (or only closes) a pull request in the UI. */
  closePull(repoFullName: string, number: number, merged: boolean): PullRequest {
    const stored = this.issues.find(this.repo(repoFullName), number);
    if (!stored?.pull) throw new Error(`${repoFullName}!${number} is no pull request`);
    const now = new Date().toISOString();
    stored.pull.state = "closed";
    stored.pull.merged = merged;
    stored.pull.closed_at = now;
    if (merged) stored.pull.merged_at = now;
    stored.issue.state = "closed";
    stored.issue.pull_request = { ...stored.issue.pull_request, merged, ...(merged ? { merged_at: now } : {}) };
    return stored.pull;
  }

  /** Base URL (what GITEA_URL is set to), e.g. `http://127.0.0.1:43121`. */
  get url(): string {
    if (!this.address) throw new Error("FakeGitea is not started");
    return this.address;
  }

  /** Every API call so far, oldest first. */
  get requests(): readonly GiteaRequest[] {
    return this.log;
  }

  /** Adds a repository (`owner/name`) and returns it as the API shows it. */
  addRepo(fullName: string, overrides?: RepoOverrides): Repository {
    return this.repos.add(fullName, overrides);
  }

  private repo(fullName: string): Repository {
    const [owner = "", name = ""] = fullName.split("/");
    const repo = this.repos.find(owner, name);
    if (!repo) throw new Error(`no repository ${fullName}`);
    return repo;
  }

  /** Gives `login` a collaborator permission on a repository. */
  setPermission(repoFullName: string, login: string, level: FakePermission): void {
    this.permissions.set(repoFullName, login, level);
  }

  addIssue(repoFullName: string, title: string, body = "", author = "alice"): Issue {
    return this.issues.addIssue(this.repo(repoFullName), author, title, body);
  }

  addPull(
    repoFullName: string,
    fields: { title: string; body?: string; head: string; base?: string },
    author = "alice",
  ): PullRequest {
    return this.issues.addPull(this.repo(repoFullName), author, { ...fields, base: fields.base ?? "main" });
  }

  /** Sends every webhook to `url`, signed with `secret`. */
  addWebhook(url: string, secret: string): void {
    this.webhooks.addTarget({ url, secret });
  }

  /** A person comments on an issue/PR: stores it and delivers the webhook (awaited). */
  async comment(
    repoFullName: string,
    number: number,
    author: string,
    body: string,
  ): Promise<{ comment: Comment; deliveries: FakeDelivery[] }> {
    const repo = this.repo(repoFullName);
    const comment = this.issues.addComment(repo, number, author, body);
    const deliveries = await this.deliverCommentCreated(repo, number, comment.id ?? 0);
    return { comment, deliveries };
  }

  /**
   * A person edits their comment in the UI: the text changes, `updated_at` moves on, and the
   * webhook gets an `edited` delivery with the old text in `changes.body.from`, as Gitea sends it.
   */
  async editComment(repoFullName: string, id: number, body: string): Promise<FakeDelivery[]> {
    const repo = this.repo(repoFullName);
    const before = this.issues.comment(repo, id)?.body ?? "";
    const number = this.issues.numberOf(id);
    const comment = this.issues.editComment(repo, id, body);
    if (!comment || number === undefined) throw new Error(`no comment ${id} in ${repoFullName}`);
    return this.deliverComment(repo, number, comment, "edited", { changes: { body: { from: before } } });
  }

  /** Comments of one issue/PR, oldest first. */
  commentsOf(repoFullName: string, number: number): Comment[] {
    return this.issues.listComments(this.repo(repoFullName), number);
  }

  /** Deletes a comment as a person would in the UI. */
  deleteComment(repoFullName: string, id: number): boolean {
    return this.issues.deleteComment(this.repo(repoFullName), id);
  }

  /** The next matching API calls fail or are slow (a 5xx, a delay). */
  injectFault(rule: FaultRule): void {
    this.faults.add(rule);
  }

  private deliverCommentCreated(
    repo: Repository,
    number: number,
    commentId: number,
  ): Promise<FakeDelivery[]> {
    const comment = this.issues.comment(repo, commentId);
    return comment ? this.deliverComment(repo, number, comment, "created") : Promise.resolve([]);
  }

  /** An IssueCommentPayload as Gitea sends it, to every webhook. */
  private deliverComment(
    repo: Repository,
    number: number,
    comment: Comment,
    action: "created" | "edited",
    extra: Record<string, unknown> = {},
  ): Promise<FakeDelivery[]> {
    const stored = this.issues.find(repo, number);
    if (!stored) return Promise.resolve([]);
    const isPull = Boolean(stored.pull);
    const payload = {
      action,
      issue: stored.issue,
      ...(isPull ? { pull_request: stored.pull } : {}),
      comment,
      ...extra,
      repository: repo,
      sender: comment.user,
      is_pull: isPull,
    };
    return this.webhooks.send("issue_comment", isPull ? "pull_request_comment" : "issue_comment", payload);
  }

  /** The Fastify app without listening (drive it with `inject()`). */
  build(): FastifyInstance {
    const app = Fastify({ logger: false, forceCloseConnections: true });
    const baseUrl = () => this.address ?? "http://127.0.0.1";
    app.addHook("onRequest", async (request, reply) => {
      const path = request.url.split("?")[0] ?? "";
      const token = tokenOf(request);
      const authorized = token === this.token;
      this.log.push({ method: request.method, path, authorized });
      if (path.startsWith("/api/v1/") && authorized && (await this.faults.apply(request, reply, path)))
        return reply;
      if (!path.startsWith("/api/v1/") || authorized) return;
      const message = token === undefined ? GITEA_MESSAGES.tokenRequired : GITEA_MESSAGES.badToken;
      await reply.code(401).send(apiError(baseUrl(), message));
    });
    app.addHook("onSend", async (request) => {
      await this.faults.beforeAnswer(request);
    });
    registerRepoRoutes(app, this.repos, baseUrl);
    registerIssueRoutes(app, {
      repos: this.repos,
      issues: this.issues,
      permissions: this.permissions,
      baseUrl,
      botLogin: this.botLogin,
      onCommentCreated: (repo, number, id) => void this.deliverCommentCreated(repo, number, id),
    });
    registerPullRoutes(app, {
      repos: this.repos,
      issues: this.issues,
      baseUrl,
      botLogin: this.botLogin,
      // A repository without git behind it (addRepo) takes any branch, as before.
      branchExists: async (repo, branch) =>
        !(await this.git?.has(repo)) || (await this.git?.branchSha(repo, branch)) !== undefined,
      headSha: async (repo, branch) => this.git?.branchSha(repo, branch),
    });
    registerGitRoutes(app, {
      git: () => this.git,
      token: this.token,
      baseUrl,
    });
    app.setNotFoundHandler(async (_request, reply) =>
      reply.code(404).send(apiError(baseUrl(), GITEA_MESSAGES.notFound)),
    );
    return app;
  }

  async start(): Promise<this> {
    if (!this.git) {
      this.ownsGitRoot = this.gitRoot === undefined;
      this.git = new GitBacking(this.gitRoot ?? (await mkdtemp(join(tmpdir(), "fake-gitea-git-"))));
    }
    this.app = this.build();
    const address = await this.app.listen({ host: "127.0.0.1", port: 0 });
    this.address = address.replace("[::1]", "127.0.0.1");
    return this;
  }

  async stop(): Promise<void> {
    await this.webhooks.settle();
    await this.app?.close();
    this.app = undefined;
    if (this.ownsGitRoot && this.git) await rm(this.git.root, { recursive: true, force: true });
  }
}
