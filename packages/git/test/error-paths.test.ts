import { mkdir } from "node:fs/promises";
import path from "node:path";
import { createBareRepo } from "@ratatoskr/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitWorkspaceError, RepoNotFoundError, type GitWorkspaces } from "../src/index.ts";
import { gitFixture, type GitFixture } from "./support/git-fixture.ts";

// What a git failure says reaches the person (run.failed, a status comment): it names the
// repository as they named it and never the server's directories (LOCAL_GIT_ROOT, WORKSPACE_DIR).

let fx: GitFixture;
let ws: GitWorkspaces;
beforeEach(async () => {
  fx = await gitFixture();
  await createBareRepo(fx.remotes, "demo/hello", { "hello.txt": "hello\n" });
  ws = fx.workspaces();
});
afterEach(async () => {
  await fx.cleanup();
});

async function failure(run: Promise<unknown>): Promise<GitWorkspaceError> {
  const err = await run.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(GitWorkspaceError);
  return err as GitWorkspaceError;
}

function expectNoLocalPath(message: string): void {
  expect(message).not.toContain(fx.dir);
  expect(message).not.toMatch(/(^|[\s'"(])\/(tmp|work|srv|home|var)\//);
}

describe("git failures shown to a person", () => {
  it("say a missing repository is not found by its name, without the local git root", async () => {
    const err = await failure(ws.prepare({ taskId: 1, repo: "demo/nope", branch: "ratatoskr/1-x" }));
    expect(err).toBeInstanceOf(RepoNotFoundError);
    expect(err.message).toContain("demo/nope");
    expectNoLocalPath(err.message);
  });

  it("keep the path out of git's own words (a directory that is not a repository)", async () => {
    await mkdir(path.join(fx.remotes, "demo", "broken.git"), { recursive: true });
    const err = await failure(ws.prepare({ taskId: 2, repo: "demo/broken", branch: "ratatoskr/2-x" }));
    expect(err.message).toContain("demo/broken");
    expectNoLocalPath(err.message);
  });

  it("keep the workspace directory out of a base branch that does not exist", async () => {
    const err = await failure(ws.prepare({ taskId: 3, repo: "demo/hello", branch: "ratatoskr/3-x", baseBranch: "no-such-base" }));
    expect(err.message).toContain("demo/hello");
    expectNoLocalPath(err.message);
  });
});
