import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { PullRequest } from "gitea-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeGitea } from "../src/index.ts";

const exec = promisify(execFile);
const TOKEN = "git-token-123";
let gitea: FakeGitea;
let work: string;

function git(cwd: string, args: string[], token?: string) {
  const auth = token ? ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`bot:${token}`).toString("base64")}`] : [];
  return exec("git", [...auth, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: work,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      GIT_AUTHOR_NAME: "T",
      GIT_AUTHOR_EMAIL: "t@example.test",
      GIT_COMMITTER_NAME: "T",
      GIT_COMMITTER_EMAIL: "t@example.test",
    },
  });
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${gitea.url}/api/v1${path}`, {
    method,
    headers: { authorization: `token ${TOKEN}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as T };
}

beforeAll(async () => {
  gitea = await new FakeGitea({ token: TOKEN }).start();
  work = await mkdtemp(join(tmpdir(), "fake-gitea-git-test-"));
  await gitea.createRepo("Acme/Shop", { "README.md": "# shop\n" });
});
afterAll(async () => {
  await gitea?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("fake Gitea's repositories are real git over smart HTTP", () => {
  it("clones with the token, and refuses a clone without it", async () => {
    const repo = (await api<{ clone_url: string }>("GET", "/repos/acme/shop")).json;
    expect(repo.clone_url).toBe(`${gitea.url}/Acme/Shop.git`);
    await git(work, ["clone", "-q", repo.clone_url, "shop"], TOKEN);
    expect(await readFile(join(work, "shop", "README.md"), "utf8")).toBe("# shop\n");
    await expect(git(work, ["clone", "-q", repo.clone_url, "anonymous"])).rejects.toThrow(/401|Authentication|could not read/i);
    await expect(git(work, ["clone", "-q", repo.clone_url, "wrong"], "not-the-token")).rejects.toThrow();
  });

  it("takes a pushed branch as a pull request head, whose sha follows the branch", async () => {
    const dir = join(work, "shop");
    await git(dir, ["checkout", "-q", "-b", "feature/greet"]);
    await writeFile(join(dir, "greet.txt"), "hi\n");
    await git(dir, ["add", "-A"]);
    await git(dir, ["commit", "-q", "-m", "greet"]);
    await git(dir, ["push", "-q", "origin", "HEAD:refs/heads/feature/greet"], TOKEN);
    const sha = (await git(dir, ["rev-parse", "HEAD"])).stdout.trim();

    const created = await api<PullRequest>("POST", "/repos/acme/shop/pulls", {
      head: "feature/greet",
      base: "main",
      title: "Greet",
      body: "Closes #1",
    });
    expect(created.status).toBe(201);
    expect(created.json.head).toMatchObject({ ref: "feature/greet", sha });

    await writeFile(join(dir, "greet.txt"), "hello\n");
    await git(dir, ["commit", "-q", "-am", "more"]);
    await git(dir, ["push", "-q", "origin", "HEAD:refs/heads/feature/greet"], TOKEN);
    const moved = (await git(dir, ["rev-parse", "HEAD"])).stdout.trim();
    const got = await api<PullRequest>("GET", `/repos/acme/shop/pulls/${created.json.number}`);
    expect(got.json.head?.sha).toBe(moved);
    const { stdout } = await exec("git", ["log", "--format=%s", "main..refs/heads/feature/greet"], { cwd: gitea.bareDir("acme/shop") });
    expect(stdout.trim().split("\n")).toEqual(["more", "greet"]);
  });

  it("refuses a pull request from a branch the repository does not have", async () => {
    const res = await api<{ message: string }>("POST", "/repos/acme/shop/pulls", { head: "nope", base: "main", title: "x" });
    expect(res.status).toBe(404);
    expect(res.json.message).toContain("nope");
  });

  it("shows a pull request merged in the UI as closed and merged", async () => {
    const open = (await api<PullRequest[]>("GET", "/repos/acme/shop/pulls?state=open")).json;
    gitea.closePull("acme/shop", open[0]!.number!, true);
    const all = (await api<PullRequest[]>("GET", "/repos/acme/shop/pulls?state=all")).json;
    expect(all[0]).toMatchObject({ state: "closed", merged: true });
    expect((await api<PullRequest[]>("GET", "/repos/acme/shop/pulls?state=open")).json).toEqual([]);
  });
});
