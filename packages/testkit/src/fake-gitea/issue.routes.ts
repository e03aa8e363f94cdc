import type { FastifyInstance, FastifyReply } from "fastify";
import type { Repository } from "gitea-js";
import { apiError, GITEA_MESSAGES } from "./gitea-api.errors.ts";
import type { IssueStore } from "./issue.store.ts";
import type { PermissionStore } from "./permission.store.ts";
import type { RepoStore } from "./repo.store.ts";

export interface IssueRouteDeps {
  repos: RepoStore;
  issues: IssueStore;
  permissions: PermissionStore;
  baseUrl: () => string;
  /** Login of the token's user (the bot): author of comments made through the API. */
  botLogin: string;
  /** Called after a comment is created through the API, as Gitea fires its webhook. */
  onCommentCreated(repo: Repository, number: number, commentId: number): void;
}

type RepoParams = { owner: string; repo: string };

/** Issues, comments and collaborator permission routes, in Gitea 1.23's shapes. */
export function registerIssueRoutes(app: FastifyInstance, deps: IssueRouteDeps): void {
  const { repos, issues, baseUrl } = deps;
  const notFound = (reply: FastifyReply) =>
    reply.code(404).send(apiError(baseUrl(), GITEA_MESSAGES.notFound));

  app.get("/api/v1/user", async () => issues.userOf(deps.botLogin));

  app.get<{ Params: RepoParams & { login: string } }>(
    "/api/v1/repos/:owner/:repo/collaborators/:login/permission",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      if (!repo) return notFound(reply);
      const permission = deps.permissions.of(repo, request.params.login);
      return { permission, role_name: permission, user: issues.userOf(request.params.login) };
    },
  );

  app.get<{ Params: RepoParams; Querystring: { since?: string; page?: string; limit?: string } }>(
    "/api/v1/repos/:owner/:repo/issues/comments",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      if (!repo) return notFound(reply);
      const since = request.query.since ? Date.parse(request.query.since) : 0;
      const limit = Number(request.query.limit ?? 30);
      const page = Number(request.query.page ?? 1);
      const all = issues.listComments(repo).filter((c) => Date.parse(c.updated_at ?? "") >= since);
      return all.slice((page - 1) * limit, page * limit);
    },
  );

  app.get<{ Params: RepoParams & { id: string } }>(
    "/api/v1/repos/:owner/:repo/issues/comments/:id",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      const comment = repo && issues.comment(repo, Number(request.params.id));
      return comment ?? notFound(reply);
    },
  );

  app.patch<{ Params: RepoParams & { id: string }; Body: { body?: string } }>(
    "/api/v1/repos/:owner/:repo/issues/comments/:id",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      const comment = repo && issues.editComment(repo, Number(request.params.id), request.body?.body ?? "");
      return comment ?? notFound(reply);
    },
  );

  app.delete<{ Params: RepoParams & { id: string } }>(
    "/api/v1/repos/:owner/:repo/issues/comments/:id",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      if (!repo || !issues.deleteComment(repo, Number(request.params.id))) return notFound(reply);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: RepoParams & { index: string } }>(
    "/api/v1/repos/:owner/:repo/issues/:index",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      const stored = repo && issues.find(repo, Number(request.params.index));
      return stored?.issue ?? notFound(reply);
    },
  );

  app.get<{ Params: RepoParams & { index: string } }>(
    "/api/v1/repos/:owner/:repo/issues/:index/comments",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      if (!repo || !issues.find(repo, Number(request.params.index))) return notFound(reply);
      return issues.listComments(repo, Number(request.params.index));
    },
  );

  app.post<{ Params: RepoParams & { index: string }; Body: { body?: string } }>(
    "/api/v1/repos/:owner/:repo/issues/:index/comments",
    async (request, reply) => {
      const repo = repos.find(request.params.owner, request.params.repo);
      const number = Number(request.params.index);
      if (!repo || !issues.find(repo, number)) return notFound(reply);
      const comment = issues.addComment(repo, number, deps.botLogin, request.body?.body ?? "");
      deps.onCommentCreated(repo, number, comment.id ?? 0);
      return reply.code(201).send(comment);
    },
  );
}
