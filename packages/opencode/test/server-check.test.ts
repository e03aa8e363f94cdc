import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@ratatoskr/runtime";
import { freePort } from "@ratatoskr/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { REQUIRED_ROUTES } from "../src/api/opencode-api.ts";
import {
  checkOpencodeAtStart,
  createOpencodeClient,
  MIN_OPENCODE_VERSION,
  OpencodeContractError,
  OpencodeTooOldError,
  OpencodeUnavailableError,
  TESTED_OPENCODE_VERSION,
} from "../src/index.ts";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const PASSWORD = "pw";

/** A tiny stand-in that answers health and /doc like some other opencode build, behind a password unless `open`. */
async function fakeOpencode(
  version: string | (() => string),
  paths: Record<string, Record<string, object>> | (() => Record<string, Record<string, object>>),
  seen: string[] = [],
  open = false,
  shell: string | null = "/app/deploy/opencode/sandbox/bash",
): Promise<string> {
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
    if (!open && req.headers.authorization !== `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}`) {
      res.statusCode = 401;
      return res.end("{}");
    }
    res.setHeader("content-type", "application/json");
    const v = typeof version === "function" ? version() : version;
    const p = typeof paths === "function" ? paths() : paths;
    if (req.url === "/global/health") return res.end(JSON.stringify({ healthy: true, version: v }));
    if (req.url === "/doc") return res.end(JSON.stringify({ openapi: "3.1.0", paths: p }));
    if (req.url === "/config") return res.end(JSON.stringify({ shell: shell ?? undefined }));
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

  it("names the pinned opencode release in its install hints, never @latest", () => {
    const pinned = (
      JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies["opencode-ai"];
    expect(TESTED_OPENCODE_VERSION).toBe(pinned);
    for (const error of [
      new OpencodeTooOldError("http://x", "1.0.0", MIN_OPENCODE_VERSION),
      new OpencodeUnavailableError("http://x", "refused"),
      new OpencodeContractError("http://x", "no /api/session"),
    ]) {
      expect(error.message).toContain(`npm i -g opencode-ai@${pinned}`);
      expect(error.message).not.toContain("@latest");
    }
  });

  it("refuses an answer nested past any real one, naming the call, before anything walks it", async () => {
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(`{"healthy": true, "version": "1.18.33", "x": ${"[".repeat(5_000)}${"]".repeat(5_000)}}`);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = createOpencodeClient({ baseUrl: url, password: PASSWORD });
    const err = await client.checkServer().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(OpencodeContractError);
    expect((err as Error).message).toContain(`opencode at ${url}`);
    expect((err as Error).message).toContain("the answer to GET /global/health nests deeper than 64 levels");
  });

  it("rejects a too-old server and says what to install", async () => {
    const url = await fakeOpencode("1.2.27", { "/global/health": { get: {} } });
    const client = createOpencodeClient({ baseUrl: url, password: PASSWORD });
    const err = await client.checkServer().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(OpencodeTooOldError);
    expect((err as Error).message).toContain("1.2.27");
    expect((err as Error).message).toContain(">= 1.18.18");
    expect((err as Error).message).toContain("npm i -g opencode-ai@1.18.33");
  });

  it("rejects a new-enough server whose /doc lacks the routes we call", async () => {
    const url = await fakeOpencode("1.18.20", {
      "/global/health": { get: {} },
      "/api/session": { post: {} },
    });
    const client = createOpencodeClient({ baseUrl: url, password: PASSWORD });
    const err = await client.checkServer().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(OpencodeContractError);
    expect((err as Error).message).toContain("GET /api/session/active");
    expect((err as Error).message).not.toContain("POST /api/session,");
  });

  it("takes the routes of the release it is tested with as read: no /doc, even one that would lack them", async () => {
    const seen: string[] = [];
    const url = await fakeOpencode(TESTED_OPENCODE_VERSION, { "/global/health": { get: {} } }, seen);
    const client = createOpencodeClient({ baseUrl: url, password: PASSWORD });
    try {
      await expect(client.checkServer()).resolves.toMatchObject({ version: TESTED_OPENCODE_VERSION });
      expect(seen).not.toContain("/doc");
      // Still refused for what no release settles: no password, or commands outside the sandbox.
      expect(seen).toContain("/config");
    } finally {
      await client.close();
    }
  });

  it("reads the routes again only when the server's version changed (readiness asks often)", async () => {
    const all: Record<string, Record<string, object>> = {};
    for (const [method, path] of REQUIRED_ROUTES) all[path] = { ...all[path], [method]: {} };
    // A release other than the tested one: its routes are read from /doc.
    let version = "1.18.34";
    let paths = all;
    const seen: string[] = [];
    const url = await fakeOpencode(
      () => version,
      () => paths,
      seen,
    );
    const client = createOpencodeClient({ baseUrl: url, password: PASSWORD });
    try {
      await client.checkServer();
      await client.checkServer();
      await client.checkServer();
      expect(seen.filter((u) => u === "/doc")).toHaveLength(1);
      // Three checks, and once, with the routes, the probe that it wants a password.
      expect(seen.filter((u) => u === "/global/health")).toHaveLength(4);
      // Replaced by a build that lacks a route: the next check reads /doc and says so.
      version = "1.18.40";
      paths = { "/global/health": { get: {} } };
      await expect(client.checkServer()).rejects.toBeInstanceOf(OpencodeContractError);
      expect(seen.filter((u) => u === "/doc")).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it("refuses a server that answers without a password, saying how to secure it", async () => {
    const all: Record<string, Record<string, object>> = {};
    for (const [method, path] of REQUIRED_ROUTES) all[path] = { ...all[path], [method]: {} };
    const url = await fakeOpencode("1.18.33", all, [], true);
    for (const password of [undefined, "anything"]) {
      const client = createOpencodeClient({ baseUrl: url, ...(password ? { password } : {}) });
      const err = await client.checkServer().catch((e: unknown) => e);
      await client.close();
      expect(err).toBeInstanceOf(OpencodeContractError);
      expect((err as Error).message).toContain("answers without a password");
      expect((err as Error).message).toContain("OPENCODE_SERVER_PASSWORD");
    }
  });

  it("refuses a server whose agent commands run outside the tool sandbox", async () => {
    const all: Record<string, Record<string, object>> = {};
    for (const [method, path] of REQUIRED_ROUTES) all[path] = { ...all[path], [method]: {} };
    for (const shell of [null, "/bin/bash"]) {
      const client = createOpencodeClient({ baseUrl: await fakeOpencode("1.18.33", all, [], false, shell), password: PASSWORD });
      const err = await client.checkServer().catch((e: unknown) => e);
      await client.close();
      expect(err).toBeInstanceOf(OpencodeContractError);
      expect((err as Error).message).toContain("outside the tool sandbox");
      expect((err as Error).message).toContain("deploy/opencode/serve");
    }
  });
});

describe("checkOpencodeAtStart", () => {
  /** The one line a service prints at start about `url`, as its JSON log carries it. */
  async function startupLines(url: string): Promise<Array<Record<string, unknown>>> {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      service: "analyst",
      level: "info",
      format: "json",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const client = createOpencodeClient({ baseUrl: url, password: PASSWORD });
    await checkOpencodeAtStart(client, logger, "analyst");
    await client.close();
    return lines;
  }

  it.each([
    ["unreachable", async () => `http://127.0.0.1:${await freePort()}`, /unreachable.*ECONNREFUSED.*Start it with `opencode serve/],
    ["too old", () => fakeOpencode("1.2.27", { "/global/health": { get: {} } }), /version 1\.2\.27, needs >= 1\.18\.18: run `npm i -g opencode-ai@/],
    ["lacking routes", () => fakeOpencode("1.18.20", { "/global/health": { get: {} } }), /missing routes .*Install opencode-ai >= 1\.18\.18/],
  ])("says in one line without a stack what is wrong with a server %s, and what to do", async (_case, serve, problem) => {
    const url = await serve();
    const lines = await startupLines(url);
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).not.toHaveProperty("err");
    expect(JSON.stringify(line)).not.toMatch(/\\n\s+at |\.ts:\d+/);
    expect(line.level).toBe("error");
    expect(line.msg).toMatch(/^opencode server not usable, so analyst jobs wait and readiness stays false until it is: /);
    expect(line.msg).toContain(url);
    expect(line.msg).toMatch(problem);
  });
});
