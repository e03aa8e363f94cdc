import { existsSync } from "node:fs";
import { mkdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { commitToBare, createBareRepo, gitFixture as git } from "@ratatoskr/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_PUSH_REMOTE, WorkspaceIoError, type GitWorkspaces } from "../src/index.ts";
import { gitFixture, type GitFixture } from "./support/git-fixture.ts";

let fx: GitFixture;
let ws: GitWorkspaces;
let bare: string;

beforeEach(async () => {
  fx = await gitFixture();
  bare = await createBareRepo(fx.remotes, "demo/hello", { "hello.txt": "hello\n" });
  ws = fx.workspaces();
});
afterEach(async () => {
  await fx.cleanup();
});

const remoteSha = async (ref: string) => (await git(bare, ["rev-parse", ref])).trim();

describe("the agent's working tree cannot steer the service's git", () => {
  it("runs no program and honours no setting the agent wrote into .git/config", async () => {
    const w = await ws.prepare({ taskId: 1, repo: "demo/hello", branch: "ratatoskr/1-x" });
    const ran = path.join(fx.dir, "filter-ran");
    const configFile = path.join(w.dir, ".git", "config");
    const pristine = await readFile(configFile, "utf8");
    // A hijacked agent's attempt: a clean filter the service's `git add` would run outside the
    // sandbox, a proxy for the credentialed push, another worktree to commit from.
    await writeFile(
      configFile,
      `${pristine}[filter "x"]\n\tclean = sh -c 'touch ${ran}; cat'\n\trequired = true\n[http]\n\tproxy = http://127.0.0.1:9\n[core]\n\tworktree = ${fx.dir}\n`,
    );
    await writeFile(path.join(w.dir, ".gitattributes"), "* filter=x\n");
    await writeFile(path.join(w.dir, ".git", "commondir"), `${fx.dir}\n`);
    await writeFile(path.join(w.dir, "hello.txt"), "changed\n");

    const sha = await ws.commitAll(w, "task 1");
    const pushed = await ws.push(w);

    expect(existsSync(ran)).toBe(false);
    expect(sha).not.toBeNull();
    expect(pushed.sha).toBe(await remoteSha("refs/heads/ratatoskr/1-x"));
    expect(await git(bare, ["show", "ratatoskr/1-x:hello.txt"])).toBe("changed\n");
    expect(await readFile(configFile, "utf8")).toBe(pristine);
    expect(existsSync(path.join(w.dir, ".git", "commondir"))).toBe(false);
  });

  it("leaves the tree no remote the agent could push to, even on a local path", async () => {
    const w = await ws.prepare({ taskId: 2, repo: "demo/hello", branch: "ratatoskr/2-x" });
    const main = await remoteSha("refs/heads/main");
    await writeFile(path.join(w.dir, "hello.txt"), "forced\n");
    await git(w.dir, ["commit", "-qam", "agent"]).catch(() => undefined);

    await expect(git(w.dir, ["push", "--force", "origin", "HEAD:main"])).rejects.toThrow(NO_PUSH_REMOTE);
    expect((await git(w.dir, ["remote", "get-url", "--push", "origin"])).trim()).toBe(NO_PUSH_REMOTE);
    expect(await remoteSha("refs/heads/main")).toBe(main);
  });

  it("refuses a tree the agent replaced by a link to another task's tree, and leaves that tree alone", async () => {
    const first = await ws.prepare({ taskId: 3, repo: "demo/hello", branch: "ratatoskr/3-x" });
    const second = await ws.prepare({ taskId: 4, repo: "demo/hello", branch: "ratatoskr/4-x" });
    await writeFile(path.join(first.dir, "secret.txt"), "task 3's own work\n");
    await rename(second.dir, `${second.dir}.gone`);
    await symlink(first.dir, second.dir);

    await expect(ws.commitAll(second, "task 4")).rejects.toBeInstanceOf(WorkspaceIoError);
    await expect(ws.push(second)).rejects.toBeInstanceOf(WorkspaceIoError);
    expect((await git(first.dir, ["status", "--porcelain"])).trim()).toBe("?? secret.txt");
    await expect(git(bare, ["rev-parse", "--verify", "refs/heads/ratatoskr/4-x"])).rejects.toThrow();
  });

  it("refuses a .git the agent replaced by a link", async () => {
    const first = await ws.prepare({ taskId: 5, repo: "demo/hello", branch: "ratatoskr/5-x" });
    const second = await ws.prepare({ taskId: 6, repo: "demo/hello", branch: "ratatoskr/6-x" });
    await rename(path.join(second.dir, ".git"), path.join(second.dir, ".git-gone"));
    await symlink(path.join(first.dir, ".git"), path.join(second.dir, ".git"));

    await expect(ws.diff(second)).rejects.toBeInstanceOf(WorkspaceIoError);
  });

  it("names a task's directory so that it cannot be guessed from its id, stable across instances", async () => {
    const dir = ws.taskDir(7);
    expect(path.basename(dir)).toMatch(/^7-[0-9a-f]{32}$/);
    expect(fx.workspaces().taskDir(7)).toBe(dir);
    await mkdir(path.join(fx.dir, "elsewhere"));
    const other = fx.workspaces({ root: path.join(fx.dir, "elsewhere") });
    expect(path.basename(other.taskDir(7))).not.toBe(path.basename(dir));
  });
});

describe("treeState", () => {
  it("changes with any edit, new file or commit in the tree", async () => {
    const w = await ws.prepare({ taskId: 8, repo: "demo/hello", branch: "ratatoskr/8-x" });
    const clean = await ws.treeState(w);
    expect(await ws.treeState(w)).toBe(clean);
    await writeFile(path.join(w.dir, "new.txt"), "x");
    const added = await ws.treeState(w);
    expect(added).not.toBe(clean);
    await commitToBare(bare, "main", { "other.txt": "y" }, "unrelated remote change");
    expect(await ws.treeState(w)).toBe(added);
  });
});
