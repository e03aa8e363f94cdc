import { giteaApi, type APIError, type Repository } from "gitea-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeGitea, GITEA_MESSAGES } from "../src/index.ts";

let gitea: FakeGitea;

beforeAll(async () => {
  gitea = await new FakeGitea({ token: "secret-token" }).start();
  gitea.addRepo("acme/web", { description: "the web app" });
});
afterAll(async () => {
  await gitea?.stop();
});

async function get(path: string, headers: Record<string, string> = { authorization: "token secret-token" }) {
  const res = await fetch(`${gitea.url}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("fake Gitea", () => {
  it("answers a repository in Gitea's shape", async () => {
    const { status, body } = await get("/api/v1/repos/acme/web");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      full_name: "acme/web",
      name: "web",
      owner: { login: "acme" },
      description: "the web app",
      default_branch: "main",
      clone_url: `${gitea.url}/acme/web.git`,
      permissions: { pull: true, push: true, admin: false },
    });
  });

  it("answers 404 with Gitea's message for a repository it does not have", async () => {
    const { status, body } = await get("/api/v1/repos/acme/nope");
    expect(status).toBe(404);
    expect(body).toEqual({ message: GITEA_MESSAGES.notFound, url: `${gitea.url}/api/swagger` });
  });

  it("answers 401 without a token or with a wrong one", async () => {
    expect(await get("/api/v1/repos/acme/web", {})).toMatchObject({
      status: 401,
      body: { message: GITEA_MESSAGES.tokenRequired },
    });
    expect(await get("/api/v1/repos/acme/web", { authorization: "token nope" })).toMatchObject({
      status: 401,
      body: { message: GITEA_MESSAGES.badToken },
    });
    expect(gitea.requests.at(-1)).toEqual({
      method: "GET",
      path: "/api/v1/repos/acme/web",
      authorized: false,
    });
  });

  it("takes the token as Gitea does: token or Bearer header, or a query parameter", async () => {
    expect((await get("/api/v1/repos/acme/web", { authorization: "Bearer secret-token" })).status).toBe(200);
    expect((await get("/api/v1/repos/acme/web?token=secret-token", {})).status).toBe(200);
    expect((await get("/api/v1/repos/acme/web?access_token=secret-token", {})).status).toBe(200);
  });

  it("serves the gitea-js client", async () => {
    const api = giteaApi(gitea.url, { token: "secret-token" });
    const repo: Repository = (await api.repos.repoGet("acme", "web")).data;
    expect(repo.full_name).toBe("acme/web");
    const missing = await api.repos
      .repoGet("acme", "nope")
      .catch((err: Response & { error: APIError }) => err);
    expect(missing).toMatchObject({ status: 404, error: { message: GITEA_MESSAGES.notFound } });
  });

  it("answers unknown API routes with Gitea's 404", async () => {
    expect(await get("/api/v1/nothing/here")).toMatchObject({
      status: 404,
      body: { message: GITEA_MESSAGES.notFound },
    });
  });
});
