import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import type { Repository } from "gitea-js";
import { apiError, GITEA_MESSAGES } from "./gitea-api.errors.ts";
import { registerRepoRoutes } from "./repo.routes.ts";
import { RepoStore, type RepoOverrides } from "./repo.store.ts";

export interface FakeGiteaOptions {
  /** The API token the fake accepts. Default `fake-gitea-token`. */
  token?: string;
}

/** One API call as the fake received it. */
export interface GiteaRequest {
  method: string;
  /** Path without the query string, e.g. `/api/v1/repos/acme/web`. */
  path: string;
  /** Whether the call carried the right token. */
  authorized: boolean;
}

/** The token from `Authorization: token|Bearer …` or `?token=` / `?access_token=`, as Gitea reads it. */
function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^(?:token|bearer)\s+(\S+)$/i.exec(header) : null;
  if (match) return match[1];
  const query = request.query as Record<string, string | undefined>;
  return query.token ?? query.access_token;
}

/**
 * A Gitea API server on 127.0.0.1 for tests, answering in Gitea 1.23's shapes (gitea-js types).
 * Every `/api/v1` call needs the token (401 otherwise), as on a private instance. Covers
 * repository lookup for now; routes for issues, comments and pull requests go in more
 * `*.routes.ts` files registered in `build()`.
 */
export class FakeGitea {
  readonly token: string;
  readonly repos: RepoStore;
  private readonly log: GiteaRequest[] = [];
  private app: FastifyInstance | undefined;
  private address: string | undefined;

  constructor(options: FakeGiteaOptions = {}) {
    this.token = options.token ?? "fake-gitea-token";
    this.repos = new RepoStore(() => this.url);
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

  /** The Fastify app without listening (drive it with `inject()`). */
  build(): FastifyInstance {
    const app = Fastify({ logger: false, forceCloseConnections: true });
    const baseUrl = () => this.address ?? "http://127.0.0.1";
    app.addHook("onRequest", async (request, reply) => {
      const path = request.url.split("?")[0] ?? "";
      const token = tokenOf(request);
      const authorized = token === this.token;
      this.log.push({ method: request.method, path, authorized });
      if (!path.startsWith("/api/v1/") || authorized) return;
      const message = token === undefined ? GITEA_MESSAGES.tokenRequired : GITEA_MESSAGES.badToken;
      await reply.code(401).send(apiError(baseUrl(), message));
    });
    registerRepoRoutes(app, this.repos, baseUrl);
    app.setNotFoundHandler(async (_request, reply) =>
      reply.code(404).send(apiError(baseUrl(), GITEA_MESSAGES.notFound)),
    );
    return app;
  }

  async start(): Promise<this> {
    this.app = this.build();
    const address = await this.app.listen({ host: "127.0.0.1", port: 0 });
    this.address = address.replace("[::1]", "127.0.0.1");
    return this;
  }

  async stop(): Promise<void> {
    await this.app?.close();
    this.app = undefined;
  }
}
