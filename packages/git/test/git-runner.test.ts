import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBareRepo, gitFixture as git } from "@ratatoskr/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { GitCommandError } from "../src/index.ts";
import { createGitRunner } from "../src/git-runner.ts";
import { gitFixture, type GitFixture } from "./support/git-fixture.ts";

const runner = () =>
  createGitRunner({ remote: { kind: "local", root: tmpdir() }, author: { name: "t", email: "t@example.com" }, timeoutMs: 10_000 });
const ctx = { op: "test", repo: "demo/hello", where: "here" };

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const done of cleanup.splice(0)) await done();
});

/** A directory whose `git` is `script`, first on PATH for this test. */
async function fakeGit(script: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "fake-git-"));
  await writeFile(path.join(dir, "git"), `#!/bin/sh\n${script}\n`);
  await chmod(path.join(dir, "git"), 0o755);
  const path0 = process.env["PATH"];
  process.env["PATH"] = `${dir}:${path0}`;
  cleanup.push(async () => {
    process.env["PATH"] = path0;
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

describe("git commands as the service runs them", () => {
  it("reads output that arrives after git exited (a loaded machine), instead of returning what came in the first 50 ms", async () => {
    // The output comes from a child that outlives git: 'exit' fires at once, the output 300 ms later.
    const cwd = await fakeGit("( sleep 0.3; echo 1111111111111111111111111111111111111111 refs/heads/main ) &\nexit 0");
    expect((await runner().run(cwd, ["ls-remote"], { ctx })).trim()).toBe("1111111111111111111111111111111111111111 refs/heads/main");
  });

  it("fails a command that exits non-zero without a word, instead of taking its silence for an empty answer", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "git-runner-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    await git(dir, ["init", "-q"]);
    await expect(runner().run(dir, ["config", "--get", "no.such.key"], { ctx })).rejects.toThrow(/git exited with 1/);
  });

  it("fails a command killed by a signal, even when it printed something first", async () => {
    const cwd = await fakeGit("echo partial\nkill -9 $$");
    await expect(runner().run(cwd, ["ls-remote"], { ctx })).rejects.toThrow("test of demo/hello failed: partial");
  });
});

describe("a task branch with no history in common with the default branch", () => {
  let fx: GitFixture;
  afterEach(async () => fx.cleanup());

  it("is named as such, not passed off as an empty merge base", async () => {
    fx = await gitFixture();
    const bare = await createBareRepo(fx.remotes, "demo/hello", { "hello.txt": "hello\n" });
    // Someone pushed an unrelated (orphan) history under the task's branch name.
    const orphan = await mkdtemp(path.join(tmpdir(), "orphan-"));
    cleanup.push(() => rm(orphan, { recursive: true, force: true }));
    await git(orphan, ["init", "-q", "--initial-branch=ratatoskr/9-x"]);
    await writeFile(path.join(orphan, "other.txt"), "unrelated\n");
    await git(orphan, ["add", "-A"]);
    await git(orphan, ["-c", "user.name=o", "-c", "user.email=o@example.com", "commit", "-q", "-m", "orphan"]);
    await git(orphan, ["push", "-q", bare, "HEAD:refs/heads/ratatoskr/9-x"]);

    const failure = await fx.workspaces().prepare({ taskId: 9, repo: "demo/hello", branch: "ratatoskr/9-x" }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(GitCommandError);
    expect((failure as Error).message).toBe("branch ratatoskr/9-x of demo/hello shares no history with main");
  });
});
