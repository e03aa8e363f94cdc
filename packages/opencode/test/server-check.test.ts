import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { freePort } from "@ratatoskr/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { REQUIRED_ROUTES } from "../src/api/opencode-api.ts";
import { createOpencodeClient, OpencodeContractError, OpencodeTooOldError, OpencodeUnavailableError } from "../src/index.ts";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A tiny stand-in that answers health and /doc like some other opencode build. */
async function fakeOpencode(
  version: string | (() => string),
  paths: Record<string, Record<string, object>> | (() => Record<string, Record<string, object>>),
  seen: string[] = [],
): Promise<string> {
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
    res.setHeader("content-type", "application/json");
    const v = typeof version === "function" ? version() : version;
    const p = typeof paths === "function" ? paths() : paths;
    if (req.url === "/global/health") return res.end(JSON.stringify({ healthy: true, version: v }));
    if (req.url === "/doc") return res.end(JSON.stringify({ openapi: "3.1.0", paths: p }));
    res.statusCode = 404;
    res.end("{}");
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("checkServer", () => {
  it("says the server is unreachable, with the URL and the cause", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const client = createOpencodeClient({ baseUrl: url });
    const err = await client.checkServer().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(OpencodeUnavailableError);
    expect((err as Error).message).toContain(url);
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
  });

  it("rejects a too-old server and says what to install", async () => {
    const url = await fakeOpencode("1.2.27", { "/global/health": { get: {} } });
    const client = createOpencodeClient({ baseUrl: url });
    const err = await client.checkServer().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(OpencodeTooOldError);
    expect((err as Error).message).toContain("1.2.27");
    expect((err as Error).message).toContain(">= 1.18.18");
    expect((err as Error).message).toContain("npm i -g opencode-ai@latest");
  });

  it("rejects a new-enough server whose /doc lacks the routes we call", async () => {
    const url = await fakeOpencode("1.18.20", { "/global/health": { get: {} }, "/api/session": { post: {} } });
    const client = createOpencodeClient({ baseUrl: url });
    const err = await client.checkServer().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(OpencodeContractError);
    expect((err as Error).message).toContain("GET /api/session/active");
    expect((err as Error).message).not.toContain("POST /api/session,");
  });

  it("reads the routes again only when the server's version changed (readiness asks often)", async () => {
    const all: Record<string, Record<string, object>> = {};
    for (const [method, path] of REQUIRED_ROUTES) all[path] = { ...all[path], [method]: {} };
    let version = "1.18.33";
    let paths = all;
    const seen: string[] = [];
    const url = await fakeOpencode(() => version, () => paths, seen);
    const client = createOpencodeClient({ baseUrl: url });
    try {
      await client.checkServer();
      await client.checkServer();
      await client.checkServer();
      expect(seen.filter((u) => u === "/doc")).toHaveLength(1);
      expect(seen.filter((u) => u === "/global/health")).toHaveLength(3);
      // Replaced by a build that lacks a route: the next check reads /doc and says so.
      version = "1.18.40";
      paths = { "/global/health": { get: {} } };
      await expect(client.checkServer()).rejects.toBeInstanceOf(OpencodeContractError);
      expect(seen.filter((u) => u === "/doc")).toHaveLength(2);
    } finally {
      await client.close();
    }
  });
});
