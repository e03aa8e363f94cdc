import type { FastifyInstance } from "fastify";
import { apiError, GITEA_MESSAGES } from "./gitea-api.errors.ts";
import type { RepoStore } from "./repo.store.ts";

/** `GET /api/v1/repos/{owner}/{repo}` → Repository, or 404 as Gitea answers it. */
export function registerRepoRoutes(app: FastifyInstance, repos: RepoStore, baseUrl: () => string): void {
  app.get<{ Params: { owner: string; repo: string } }>(
    "/api/v1/repos/:owner/:repo",
    async (request, reply) => {
      const found = repos.find(request.params.owner, request.params.repo);
      if (!found) return reply.code(404).send(apiError(baseUrl(), GITEA_MESSAGES.notFound));
      return found;
    },
  );
}
