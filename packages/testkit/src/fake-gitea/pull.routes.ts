import type { FastifyInstance } from "fastify";
import type { CreatePullRequestOption, PullRequest } from "gitea-js";
import { apiError, GITEA_MESSAGES } from "./gitea-api.errors.ts";
import type { IssueStore } from "./issue.store.ts";
import type { RepoStore } from "./repo.store.ts";

type RepoParams = { owner: string; repo: string };

/** Pull request routes: create, list, get (Gitea 1.23 shapes). */
export function registerPullRoutes(
  app: FastifyInstance,
  deps: {
    repos: RepoStore;
    issues: IssueStore;
    baseUrl: () => string;
    botLogin: string;
    branchExists(repo: string, branch: string): Promise<boolean>;
    /** The branch's tip in the backing git repository (undefined without one). */
    headSha(repo: string, branch: string): Promise<string | undefined>;
  },
): void {
  const { repos, issues, baseUrl } = deps;
  /** A PR's head moves with its branch, as on Gitea. */
  const fresh = async (repo: string, pull: PullRequest): Promise<PullRequest> => {
    const sha = pull.head?.ref ? await deps.headSha(repo, pull.head.ref) : undefined;
    if (sha && pull.head) pull.head.sha = sha;
    return pull;
  };
  app.get<{ Params: RepoParams; Querystring: { state?: string } }>(
    "/api/v1/repos/:owner/:repo/pulls",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      if (!repo) return reply.code(404).send(apiError(baseUrl(), GITEA_MESSAGES.notFound));
      const state = request.query.state ?? "open";
      const pulls = issues.pulls(repo).filter((p) => state === "all" || p.state === state);
      return Promise.all(pulls.map((p) => fresh(repo.full_name ?? "", p)));
    },
  );

  app.get<{ Params: RepoParams & { index: string } }>(
    "/api/v1/repos/:owner/:repo/pulls/:index",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      const pull = repo && issues.find(repo, Number(request.params.index))?.pull;
      return pull ? fresh(repo.full_name ?? "", pull) : reply.code(404).send(apiError(baseUrl(), GITEA_MESSAGES.notFound));
    },
  );

  app.post<{ Params: RepoParams; Body: CreatePullRequestOption }>(
    "/api/v1/repos/:owner/:repo/pulls",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      if (!repo) return reply.code(404).send(apiError(baseUrl(), GITEA_MESSAGES.notFound));
      const { head, base, title, body } = request.body ?? {};
      if (!head || !base || !title)
        return reply.code(422).send(apiError(baseUrl(), "head, base and title are required"));
      if (!(await deps.branchExists(repo.full_name ?? "", head))) {
        return reply.code(404).send(apiError(baseUrl(), `branch ${head} does not exist`));
      }
      const open = issues
        .pulls(repo)
        .find((p) => p.state === "open" && p.head?.ref === head && p.base?.ref === base);
      if (open)
        return reply
          .code(409)
          .send(apiError(baseUrl(), `pull request already exists for these targets [id: ${open.id}]`));
      const created = issues.addPull(repo, deps.botLogin, { title, body, head, base });
      return reply.code(201).send(await fresh(repo.full_name ?? "", created));
    },
  );
}
