import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { commitToBare, createBareRepo, gitFixture as git } from "@ratatoskr/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitCommandError, InvalidRepoNameError, PushRejectedError, RepoNotFoundError, branchName, type GitWorkspaces } from "../src/index.ts";
import { gitFixture, type GitFixture } from "./support/git-fixture.ts";

let fx: GitFixture;
let ws: GitWorkspaces;
let bare: string;

beforeEach(async () => {
  fx = await gitFixture();
  bare = await createBareRepo(fx.remotes, "demo/hello", { "hello.txt": "hello\n", "src/app.ts": "export const x = 1;\n" });
  ws = fx.workspaces();
});
afterEach(async () => {
  await fx.cleanup();
});

const remoteSha = async (branch: string) => (await git(bare, ["rev-parse", `refs/heads/${branch}`])).trim();
const remoteBranches = async () => (await git(bare, ["for-each-ref", "--format=%(refname:short)", "refs/heads"])).trim().split("\n");

describe("prepare", () => {
  it("clones the repository into the task's own tree on a task branch from the default branch", async () => {
    const branch = branchName(7, "Fix the greeting");
    const w = await ws.prepare({ taskId: 7, repo: "demo/hello", branch });

    // The task's directory carries an unguessable tag: no other task's agent can name it.
    expect(path.relative(fx.workspaceRoot, w.dir)).toMatch(/^tasks\/7-[0-9a-f]{32}\/demo\/hello$/);
    expect(ws.taskDir(7)).toBe(path.dirname(path.dirname(w.dir)));
    expect(await readFile(path.join(w.dir, "hello.txt"), "utf8")).toBe("hello\n");
    expect((await git(w.dir, ["rev-parse", "--abbrev-ref", "HEAD"])).trim()).toBe("ratatoskr/7-fix-the-greeting");
    expect(w.baseBranch).toBe("main");
    expect(w.baseSha).toBe(await remoteSha("main"));
  });

  it("fetches into the same tree on a later round instead of cloning again, keeping the agent's work", async () => {
    const first = await ws.prepare({ taskId: 7, repo: "demo/hello", branch: "ratatoskr/7-x" });
    await writeFile(path.join(first.dir, "hello.txt"), "hello, round one\n");
    await writeFile(path.join(first.dir, "marker.txt"), "left by round one\n");
    const newer = await commitToBare(bare, "main", { "other.txt": "someone else\n" }, "meanwhile on main");

    const second = await ws.prepare({ taskId: 7, repo: "demo/hello", branch: "ratatoskr/7-x" });

    expect(second.dir).toBe(first.dir);
    expect(second.baseSha).toBe(first.baseSha);
    expect(await readFile(path.join(second.dir, "marker.txt"), "utf8")).toBe("left by round one\n");
    expect((await git(second.dir, ["rev-parse", "refs/remotes/origin/main"])).trim()).toBe(newer);
    expect(fx.logger.lines.filter((l) => l.includes("repository cloned"))).toHaveLength(1);
  });

  it("catches up with the branch another clone pushed (the reviewer's clone after each dev round), never past local work", async () => {
    const dev = ws;
    const reviewer = fx.workspaces({ root: path.join(fx.dir, "reviewer") });
    const d = await dev.prepare({ taskId: 8, repo: "demo/hello", branch: "ratatoskr/8-x" });
    await writeFile(path.join(d.dir, "hello.txt"), "round one\n");
    await dev.commitAll(d, "round 1");
    await dev.push(d);
    const r1 = await reviewer.prepare({ taskId: 8, repo: "demo/hello", branch: "ratatoskr/8-x" });
    expect(await reviewer.diff(r1)).toContain("+round one");

    await writeFile(path.join(d.dir, "hello.txt"), "round two\n");
    await dev.commitAll(d, "round 2");
    const pushed = await dev.push(d);
    const r2 = await reviewer.prepare({ taskId: 8, repo: "demo/hello", branch: "ratatoskr/8-x" });
    expect(await reviewer.headSha(r2)).toBe(pushed.sha);
    expect(await reviewer.diff(r2)).toContain("+round two");

    // Local commits the remote has not seen stay: no reset over them.
    await writeFile(path.join(d.dir, "hello.txt"), "unpushed\n");
    const local = await dev.commitAll(d, "round 3");
    expect(await dev.headSha(await dev.prepare({ taskId: 8, repo: "demo/hello", branch: "ratatoskr/8-x" }))).toBe(local);
  });

  it("gives two tasks on one repository separate working trees and branches", async () => {
    const a = await ws.prepare({ taskId: 1, repo: "demo/hello", branch: "ratatoskr/1-a" });
    const b = await ws.prepare({ taskId: 2, repo: "demo/hello", branch: "ratatoskr/2-b" });
    await writeFile(path.join(a.dir, "hello.txt"), "changed by task 1\n");

    expect(a.dir).not.toBe(b.dir);
    expect(await readFile(path.join(b.dir, "hello.txt"), "utf8")).toBe("hello\n");
    expect(await ws.changedFiles(b)).toEqual([]);
    expect(await ws.changedFiles(a)).toEqual(["hello.txt"]);
  });

  it("starts from a given base branch and takes over a branch that already exists on the remote", async () => {
    await commitToBare(bare, "develop", { "dev.txt": "develop\n" }, "develop work");
    const prHead = await commitToBare(bare, "feature/pr", { "pr.txt": "pr\n" }, "pr head");

    const onDevelop = await ws.prepare({ taskId: 3, repo: "demo/hello", branch: "ratatoskr/3-d", baseBranch: "develop" });
    const onPr = await ws.prepare({ taskId: 4, repo: "demo/hello", branch: "feature/pr", baseBranch: "main" });

    expect(await readFile(path.join(onDevelop.dir, "dev.txt"), "utf8")).toBe("develop\n");
    expect(onDevelop.baseSha).toBe(await remoteSha("develop"));
    expect(await ws.headSha(onPr)).toBe(prHead);
    expect(onPr.baseSha).toBe(await remoteSha("main"));
    expect(await ws.diff(onPr)).toContain("+pr");
  });

  it("rejects invalid repository names before touching the disk", async () => {
    for (const name of ["../etc/passwd", "/abs/repo", "demo/../hello", "demo", "a/b/c", "https://evil.example/demo/hello", "demo/hello;rm"]) {
      await expect(ws.prepare({ taskId: 5, repo: name, branch: "ratatoskr/5-x" }), name).rejects.toBeInstanceOf(InvalidRepoNameError);
    }
    await expect(ws.prepare({ taskId: 5, repo: "demo/hello", branch: "--upload-pack=touch /tmp/x" })).rejects.toBeInstanceOf(GitCommandError);
  });

  it("says clearly when the repository or the base branch does not exist", async () => {
    const missing = ws.prepare({ taskId: 6, repo: "demo/nope", branch: "ratatoskr/6-x" });
    await expect(missing).rejects.toBeInstanceOf(RepoNotFoundError);
    await expect(missing).rejects.toThrow(/demo\/nope was not found/);
    const noBranch = ws.prepare({ taskId: 6, repo: "demo/hello", branch: "ratatoskr/6-x", baseBranch: "nope" });
    await expect(noBranch).rejects.toThrow(/branch nope was not found in demo\/hello/);
  });
});

describe("commit, diff and push", () => {
  it("commits all changes, diffs the whole branch against its base and pushes without touching main", async () => {
    const w = await ws.prepare({ taskId: 8, repo: "demo/hello", branch: "ratatoskr/8-greet" });
    const mainBefore = await remoteSha("main");
    await writeFile(path.join(w.dir, "hello.txt"), "hello, world\n");
    const sha1 = await ws.commitAll(w, "round 1");
    await writeFile(path.join(w.dir, "new.txt"), "brand new\n");
    const sha2 = await ws.commitAll(w, "round 2");

    const diff = await ws.diff(w);
    expect(diff).toContain("-hello\n+hello, world");
    expect(diff).toContain("+brand new");
    expect(await ws.changedFiles(w)).toEqual(["hello.txt", "new.txt"]);
    expect(sha1).not.toBe(sha2);

    const pushed = await ws.push(w);
    expect(pushed).toEqual({ branch: "ratatoskr/8-greet", sha: sha2, alreadyPushed: false });
    expect(await remoteSha("ratatoskr/8-greet")).toBe(sha2);
    expect(await remoteSha("main")).toBe(mainBefore);
    expect((await git(bare, ["log", "-1", "--format=%an <%ae>", "ratatoskr/8-greet"])).trim()).toBe("Ratatoskr <ratatoskr@localhost>");
  });

  it("returns null when nothing changed, so the caller can fail the round", async () => {
    const w = await ws.prepare({ taskId: 9, repo: "demo/hello", branch: "ratatoskr/9-x" });
    expect(await ws.commitAll(w, "nothing")).toBeNull();
    await writeFile(path.join(w.dir, "hello.txt"), "hello\n"); // same content: not a change
    expect(await ws.commitAll(w, "nothing")).toBeNull();
    expect(await ws.diff(w)).toBe("");
  });

  it("treats pushing the same commit twice as a no-op", async () => {
    const w = await ws.prepare({ taskId: 10, repo: "demo/hello", branch: "ratatoskr/10-x" });
    await writeFile(path.join(w.dir, "hello.txt"), "v2\n");
    const sha = await ws.commitAll(w, "v2");
    expect((await ws.push(w)).alreadyPushed).toBe(false);
    expect(await ws.push(w)).toEqual({ branch: "ratatoskr/10-x", sha, alreadyPushed: true });
    expect(await remoteSha("ratatoskr/10-x")).toBe(sha);
  });

  it("fails with PushRejectedError when someone else pushed to the branch, and never overwrites their commit", async () => {
    const w = await ws.prepare({ taskId: 11, repo: "demo/hello", branch: "ratatoskr/11-x" });
    await writeFile(path.join(w.dir, "hello.txt"), "ours\n");
    await ws.commitAll(w, "ours 1");
    await ws.push(w);
    const theirs = await commitToBare(bare, "ratatoskr/11-x", { "theirs.txt": "theirs\n" }, "someone else");
    await writeFile(path.join(w.dir, "hello.txt"), "ours again\n");
    await ws.commitAll(w, "ours 2");

    const push = ws.push(w);
    await expect(push).rejects.toBeInstanceOf(PushRejectedError);
    await expect(push).rejects.toThrow(/ratatoskr\/11-x to demo\/hello was rejected.*not forcing/);
    expect(await remoteSha("ratatoskr/11-x")).toBe(theirs);
  });

  it("diffAll heads each repository of a task and covers all of them", async () => {
    await createBareRepo(fx.remotes, "demo/lib", { "lib.ts": "export {};\n" });
    const a = await ws.prepare({ taskId: 12, repo: "demo/hello", branch: "ratatoskr/12-x" });
    const b = await ws.prepare({ taskId: 12, repo: "demo/lib", branch: "ratatoskr/12-x" });
    await writeFile(path.join(a.dir, "hello.txt"), "a\n");
    await ws.commitAll(a, "a");

    const all = await ws.diffAll([a, b]);
    expect(all).toMatch(/### demo\/hello \(ratatoskr\/12-x\)\n[^]*\+a\n/);
    expect(all).toContain("### demo/lib (ratatoskr/12-x)\n(no changes)");
    expect(path.dirname(path.dirname(a.dir))).toBe(ws.taskDir(12));
    expect(path.dirname(path.dirname(b.dir))).toBe(ws.taskDir(12));
    expect(await remoteBranches()).toEqual(["main"]);
  });

  it("ignores hooks and external diff programs the agent put into the workspace's .git", async () => {
    const w = await ws.prepare({ taskId: 13, repo: "demo/hello", branch: "ratatoskr/13-x" });
    const pwned = path.join(fx.dir, "pwned");
    await writeFile(path.join(w.dir, ".git", "hooks", "pre-commit"), `#!/bin/sh\ntouch ${pwned}\nexit 1\n`, { mode: 0o755 });
    await git(w.dir, ["config", "diff.external", `sh -c 'touch ${pwned}'`]);
    await writeFile(path.join(w.dir, "hello.txt"), "changed\n");

    expect(await ws.commitAll(w, "with hooks around")).toMatch(/^[0-9a-f]{40}$/);
    expect(await ws.diff(w)).toContain("+changed");
    await expect(readFile(pwned)).rejects.toThrow(/ENOENT/);
  });
});
