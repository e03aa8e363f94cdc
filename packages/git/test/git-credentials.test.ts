import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { createBareRepo, gitFixture as git, startGitHttpServer, type GitHttpServer } from "@ratatoskr/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitAuthError, GitHostUnreachableError, NO_PUSH_REMOTE, RepoNotFoundError, type GitWorkspaces, type RemoteSpec } from "../src/index.ts";
import { gitFixture, type GitFixture } from "./support/git-fixture.ts";

const TOKEN = "tok-5f1c9a7e3b2d4c6e8a0b";
const BASIC = Buffer.from(`ratatoskr-bot:${TOKEN}`).toString("base64");

let fx: GitFixture;
let server: GitHttpServer;
let remote: Extract<RemoteSpec, { kind: "http" }>;
let ws: GitWorkspaces;

beforeEach(async () => {
  fx = await gitFixture();
  await createBareRepo(fx.remotes, "demo/hello", { "hello.txt": "hello\n" });
  server = await startGitHttpServer({ root: fx.remotes, auth: { username: "ratatoskr-bot", password: TOKEN } });
  remote = { kind: "http", baseUrl: server.url, username: "ratatoskr-bot", token: TOKEN };
  ws = fx.workspaces({ remote });
});
afterEach(async () => {
  await server?.close();
  await fx.cleanup();
});

/** Every file under dir, recursively (to scan a whole workspace for the token). */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(p)));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Command lines of every process visible now, NUL-separated args joined by spaces. */
async function allCmdlines(): Promise<string[]> {
  const pids = (await readdir("/proc")).filter((p) => /^\d+$/.test(p));
  const lines = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")));
  return lines.map((l) => l.split("\0").join(" ")).filter(Boolean);
}

describe("credentials over smart HTTP", () => {
  it("clones, fetches and pushes with the token while it never lands in .git, the remote URL, argv or logs", async () => {
    const first = await ws.prepare({ taskId: 21, repo: "demo/hello", branch: "ratatoskr/21-x" });
    await writeFile(path.join(first.dir, "hello.txt"), "hello over http\n");
    await ws.commitAll(first, "round 1");

    const seen: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        seen.push(...(await allCmdlines()));
        await new Promise((r) => setImmediate(r));
      }
    })();
    const again = await ws.prepare({ taskId: 21, repo: "demo/hello", branch: "ratatoskr/21-x" });
    const pushed = await ws.push(again);
    sampling = false;
    await sampler;

    expect(pushed.alreadyPushed).toBe(false);
    expect((await git(path.join(fx.remotes, "demo/hello.git"), ["rev-parse", "refs/heads/ratatoskr/21-x"])).trim()).toBe(pushed.sha);
    // The sampler did see git at work, so its silence about the token means something.
    expect(seen.some((l) => /\bgit\b.*\b(push|fetch|remote-http|send-pack|http-backend)\b/.test(l))).toBe(true);
    expect(seen.filter((l) => l.includes(TOKEN) || l.includes(BASIC))).toEqual([]);

    for (const file of await filesUnder(path.join(first.dir, ".git"))) {
      const content = await readFile(file);
      expect(content.includes(TOKEN) || content.includes(BASIC), file).toBe(false);
    }
    // origin names no place the agent could push to; the service fetches and pushes by URL.
    expect((await git(first.dir, ["remote", "get-url", "origin"])).trim()).toBe(NO_PUSH_REMOTE);
    expect((await git(first.dir, ["remote", "get-url", "--push", "origin"])).trim()).toBe(NO_PUSH_REMOTE);
    expect(fx.logger.lines.length).toBeGreaterThan(0);
    expect(fx.logger.lines.filter((l) => l.includes(TOKEN) || l.includes(BASIC))).toEqual([]);
    // Every request git made carried the header, and the server accepted it.
    const gitRequests = server.requests.filter((r) => r.path.startsWith("/demo/hello.git"));
    expect(gitRequests.length).toBeGreaterThan(3);
    expect(gitRequests.every((r) => r.authorization === `Basic ${BASIC}` && r.status === 200)).toBe(true);
  });

  it("reports a wrong token as an auth failure without echoing it", async () => {
    const wrong = fx.workspaces({ remote: { ...remote, token: "wrong-token-123456" } });
    const attempt = wrong.prepare({ taskId: 22, repo: "demo/hello", branch: "ratatoskr/22-x" });
    await expect(attempt).rejects.toBeInstanceOf(GitAuthError);
    await expect(attempt).rejects.not.toThrow(/wrong-token-123456/);
  });

  it("reports a missing repository and an unreachable host as different, clear errors", async () => {
    await expect(ws.prepare({ taskId: 23, repo: "demo/absent", branch: "ratatoskr/23-x" })).rejects.toBeInstanceOf(RepoNotFoundError);

    await server.close();
    const down = ws.prepare({ taskId: 24, repo: "demo/hello", branch: "ratatoskr/24-x" });
    await expect(down).rejects.toBeInstanceOf(GitHostUnreachableError);
    await expect(down).rejects.toThrow(new RegExp(`git host ${server.url.replace(/[.]/g, "\\.")} is unreachable`));
  });

  it("does not hand the git credentials to the agent's environment or to other hosts", async () => {
    expect(Object.values(process.env).some((v) => v?.includes(TOKEN))).toBe(false);
    const w = await ws.prepare({ taskId: 25, repo: "demo/hello", branch: "ratatoskr/25-x" });
    // An agent points origin elsewhere; our fetch still goes to the configured host only.
    const other = await startGitHttpServer({ root: fx.remotes });
    try {
      await git(w.dir, ["remote", "set-url", "origin", `${other.url}/demo/hello.git`]);
      await ws.prepare({ taskId: 25, repo: "demo/hello", branch: "ratatoskr/25-x" });
      expect(other.requests).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
