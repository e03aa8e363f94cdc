import { writeFile } from "node:fs/promises";
import path from "node:path";
import { commitToBare, createBareRepo, gitFixture as git } from "@ratatoskr/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeMovedRef, movedRefs, movedRefsReason, watchRemoteRefs, type GitWorkspaces } from "../src/index.ts";
import { gitFixture, type GitFixture } from "./support/git-fixture.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);

describe("movedRefs", () => {
  it("lists created, moved and deleted refs except the allowed ones and the host's own", () => {
    const before = new Map([
      ["HEAD", A],
      ["refs/heads/main", A],
      ["refs/heads/old", A],
      ["refs/heads/task", A],
      ["refs/pull/1/head", A],
    ]);
    const after = new Map([
      ["HEAD", B],
      ["refs/heads/main", B],
      ["refs/heads/new", B],
      ["refs/heads/task", B],
      ["refs/pull/1/head", B],
      ["refs/tags/v1", B],
    ]);
    const moved = movedRefs("o/r", before, after, new Set(["refs/heads/task"]));
    expect(moved.map((m) => m.ref)).toEqual(["refs/heads/main", "refs/heads/new", "refs/heads/old", "refs/tags/v1"]);
    expect(moved.map(describeMovedRef)).toEqual([
      "refs/heads/main of o/r moved aaaaaaa → bbbbbbb",
      "refs/heads/new of o/r was created at bbbbbbb",
      "refs/heads/old of o/r was deleted (was aaaaaaa)",
      "refs/tags/v1 of o/r was created at bbbbbbb",
    ]);
    expect(movedRefsReason(moved)).toContain("refs/heads/main of o/r moved");
  });
});

describe("watchRemoteRefs on a real bare repository", () => {
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

  it("names every ref that moved during the run, and not the task branch the service pushed", async () => {
    const w = await ws.prepare({ taskId: 1, repo: "demo/hello", branch: "ratatoskr/1-x" });
    const watch = await watchRemoteRefs(ws, [w]);
    expect(await watch.moved()).toEqual([]);

    // What an escaped agent would do on a writable remote: move main, add a branch.
    const mainBefore = (await git(bare, ["rev-parse", "main"])).trim();
    const forced = await commitToBare(bare, "main", { "hello.txt": "pwned\n" }, "forced");
    await commitToBare(bare, "evil", { "x.txt": "x" }, "elsewhere");
    await writeFile(path.join(w.dir, "hello.txt"), "the task's work\n");
    await ws.commitAll(w, "task");
    await ws.push(w);

    const moved = await watch.moved();
    expect(moved).toEqual([
      { repo: "demo/hello", ref: "refs/heads/evil", after: expect.stringMatching(/^[0-9a-f]{40}$/) },
      { repo: "demo/hello", ref: "refs/heads/main", before: mainBefore, after: forced },
    ]);
  });
});
