import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { FakeGitea } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GiteaAnswerError, GiteaApiError, GiteaClient, GiteaUnavailableError } from "../src/index.ts";

let gitea: FakeGitea;
let client: GiteaClient;
const repo = { owner: "acme", repo: "web" };

beforeAll(async () => {
  gitea = await new FakeGitea({ token: "tok-very-secret" }).start();
  gitea.addRepo("acme/web");
  gitea.addIssue("acme/web", "Button is blue");
  gitea.setPermission("acme/web", "reader", "read");
  gitea.setPermission("acme/web", "writer", "write");
  client = new GiteaClient({
    baseUrl: gitea.url,
    token: "tok-very-secret",
    retry: { minTimeoutMs: 10, maxTimeoutMs: 50 },
  });
});
afterAll(async () => {
  await gitea?.stop();
});

describe("GiteaClient", () => {
  it("creates, edits, lists and deletes comments as the bot", async () => {
    const created = await client.createComment(repo, 1, "hello");
    expect(created.user?.login).toBe("ratatoskr-bot");
    await client.editComment(repo, created.id!, "edited");
    expect((await client.listIssueComments(repo, 1)).map((c) => c.body)).toContain("edited");
    await client.deleteComment(repo, created.id!);
    await expect(client.getComment(repo, created.id!)).rejects.toMatchObject({
      status: 404,
      permanent: true,
    });
    expect((await client.currentUser()).login).toBe("ratatoskr-bot");
  });

  it("reads collaborator permission, none for strangers", async () => {
    expect(await client.permission(repo, "writer")).toBe("write");
    expect(await client.permission(repo, "reader")).toBe("read");
    expect(await client.permission(repo, "acme")).toBe("owner");
    expect(await client.permission(repo, "stranger")).toBe("none");
  });

  it("makes one request for identical reads asked while it is in flight, and keeps nothing after", async () => {
    const before = gitea.requests.length;
    const reads = await Promise.all([
      client.permission(repo, "writer"),
      client.permission(repo, "writer"),
      client.permission(repo, "reader"),
      client.getIssue(repo, 1),
      client.getIssue(repo, 1),
    ]);
    expect(reads.slice(0, 3)).toEqual(["write", "write", "read"]);
    expect(reads.slice(3).map((i) => (i as { title?: string }).title)).toEqual(["Button is blue", "Button is blue"]);
    // writer's permission and the issue once each, reader's permission apart.
    expect(gitea.requests.length - before).toBe(3);

    // Answered: the next read asks again and sees a change.
    gitea.setPermission("acme/web", "writer", "read");
    expect(await client.permission(repo, "writer")).toBe("read");
    gitea.setPermission("acme/web", "writer", "write");
    expect(gitea.requests.length - before).toBe(4);

    // A failed read fails everyone who shared it, and is not remembered either.
    gitea.injectFault({ status: 404, times: 1, path: /issues\/1$/ });
    const shared = await Promise.allSettled([client.getIssue(repo, 1), client.getIssue(repo, 1)]);
    expect(shared.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((await client.getIssue(repo, 1)).title).toBe("Button is blue");
  });

  it("retries 5xx and 429 answers and succeeds", async () => {
    gitea.injectFault({ status: 503, times: 2, path: /issues\/1$/ });
    gitea.injectFault({ status: 429, times: 1, path: /issues\/1$/ });
    const before = gitea.requests.length;
    expect((await client.getIssue(repo, 1)).title).toBe("Button is blue");
    expect(gitea.requests.length - before).toBe(4);
  });

  it("names the call and target on a 4xx and never shows the token", async () => {
    const err = await client.getIssue(repo, 99).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GiteaApiError);
    expect((err as Error).message).toBe(
      "Gitea issueGetIssue (acme/web#99) answered 404: The target couldn't be found.",
    );
    expect(JSON.stringify(err) + String((err as Error).stack)).not.toContain("tok-very-secret");
  });

  it("gives up after the retries with the last status, as a transient error", async () => {
    gitea.injectFault({ status: 502, times: 10, path: /issues\/1$/ });
    const err = await client.getIssue(repo, 1).catch((e: unknown) => e);
    gitea.faults.clear();
    expect(err).toMatchObject({ status: 502, permanent: false, call: "issueGetIssue" });
  });

  it("reports an unreachable server as GiteaUnavailableError", async () => {
    const dead = new GiteaClient({
      baseUrl: "http://127.0.0.1:1",
      token: "t",
      retry: { maxRetries: 1, minTimeoutMs: 5 },
    });
    const err = await dead.getIssue(repo, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GiteaUnavailableError);
    expect((err as Error).message).toContain("issueGetIssue (acme/web#1) could not be reached");
  });

  it("refuses an answer nested past any real one before anything walks it, naming the call", async () => {
    const deep = `[${"[".repeat(5_000)}${"]".repeat(5_000)}]`;
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(`{"id": 1, "number": 1, "title": "t", "labels": ${deep}}`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const hostile = new GiteaClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: "t" });
      const err = await hostile.getIssue(repo, 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GiteaAnswerError);
      expect((err as Error).message).toBe(
        "Gitea issueGetIssue (acme/web#1) answered with something no Gitea sends: nested deeper than 64 levels",
      );
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
