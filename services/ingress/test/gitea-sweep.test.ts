import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRepositories } from "@ratatoskr/db";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/db/testing";
import { GiteaAnswerError, GiteaClient, type Comment } from "@ratatoskr/gitea";
import { HOSTILE_TEXTS } from "@ratatoskr/testkit";
import { createLogger } from "@ratatoskr/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCommandAcceptor } from "../src/gitea/store/command-acceptor.ts";
import { sweepRepository, type SweepDeps } from "../src/gitea/sweep/comment-sweeper.ts";

/**
 * The sweep against a Gitea whose answers the test writes: comment ids repeated across
 * repositories (one Gitea never does it, but a comment is known by its repository and id) and an
 * answer nested past any real one. Real Postgres behind the sweep.
 */
let database: TestDatabase;
let server: Server;
let deps: SweepDeps;
/** Comments by repository (`owner/name`, lower case: Gitea's names are case-insensitive). */
const comments = new Map<string, unknown[]>();

const comment = (id: number, body: string, login = "alice"): Comment => {
  const at = new Date().toISOString();
  return { id, body, user: { login }, issue_url: "https://git.example/x/y/issues/1", created_at: at, updated_at: at };
};

beforeAll(async () => {
  database = await createTestDatabase();
  server = createServer((req, res) => {
    const match = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/issues\/comments\?.*page=(\d+)/.exec(req.url ?? "");
    const list = match && match[3] === "1" ? (comments.get(`${match[1]}/${match[2]}`.toLowerCase()) ?? []) : [];
    res.setHeader("content-type", "application/json");
    res.end(typeof list[0] === "string" ? list[0] : JSON.stringify(list));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const gitea = new GiteaClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: "t" });
  deps = {
    gitea,
    repos: createRepositories(database.db.prisma),
    botLogin: () => "ratatoskr-bot",
    accept: createCommandAcceptor(database.db.pool, 3),
    stored: () => undefined,
    logger: createLogger({ service: "ingress", level: "silent" }),
  };
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await database?.drop();
});

const deliveriesOf = (commentId: number) =>
  database.db.prisma.webhookDelivery.findMany({ where: { commentId: BigInt(commentId) }, orderBy: { id: "asc" } });

describe("the Gitea comment sweep", () => {
  it("knows a comment by its repository and id: one id in two repositories is two commands, a name spelled otherwise the same", async () => {
    comments.set("acme/web", [comment(4_100, "/agent status")]);
    comments.set("acme/api", [comment(4_100, "/agent status")]);
    expect(await sweepRepository(deps, { owner: "acme", repo: "web" })).toEqual([4_100]);
    expect(await sweepRepository(deps, { owner: "acme", repo: "api" })).toEqual([4_100]);
    // GITEA_REPOS as an operator may type it: the comments already taken in are not taken again.
    expect(await sweepRepository(deps, { owner: "Acme", repo: "API" })).toEqual([]);
    expect((await deliveriesOf(4_100)).map((d) => [d.repoOwner, d.repoName, d.deliveryId])).toEqual([
      ["acme", "web", "sweep-acme/web:4100"],
      ["acme", "api", "sweep-acme/api:4100"],
    ]);
  });

  it("refuses a comment listing nested past any real one: nothing taken in, the cursor stays", async () => {
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    comments.set("acme/deep", [`[{"id": 4200, "body": "/agent status", "user": {"login": "alice"}, "issue_url": "https://git.example/x/y/issues/1", "x": ${deep}}]`]);
    const err = await sweepRepository(deps, { owner: "acme", repo: "deep" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GiteaAnswerError);
    expect((err as Error).message).toContain("issueGetRepoComments (acme/deep) answered with something no Gitea sends");
    expect(await deliveriesOf(4_200)).toEqual([]);
    expect(await database.db.prisma.giteaSweepCursor.findFirst({ where: { repoName: "deep" } })).toBeNull();
  });

  it("takes in no command from an author whose login no Gitea allows, and passes on (the webhook answers 422)", async () => {
    const logins = [...HOSTILE_TEXTS.map((h) => h.text.slice(0, 200)), "alice bob", "@alice", "al\u202eice"];
    comments.set("acme/names", [...logins.map((login, i) => comment(4_300 + i, "/agent plan", login)), comment(4_399, "/agent status")]);
    expect(await sweepRepository(deps, { owner: "acme", repo: "names" })).toEqual([4_399]);
    for (let i = 0; i < logins.length; i++) expect(await deliveriesOf(4_300 + i)).toEqual([]);
    expect((await database.db.prisma.giteaSweepCursor.findFirst({ where: { repoName: "names" } }))?.lastCommentId).toBe(4_399n);
  });
});
