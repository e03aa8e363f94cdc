import { access, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { commitToBare, createBareRepo, gitFixture as git } from "@ratatoskr/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GitWorkspaces } from "../src/index.ts";
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

const missing = (file: string) => access(file).then(() => false, () => true);

describe("syncToRemote", () => {
  it("drops unpushed commits and edits, and takes what others pushed to the branch", async () => {
    const first = await ws.prepare({ taskId: 3, repo: "demo/hello", branch: "agent/issue-1-3" });
    await writeFile(path.join(first.dir, "hello.txt"), "round one\n");
    await ws.commitAll(first, "round one");
    await ws.push(first);
    // A cancelled run left a local commit and stray files; a person pushed to the branch meanwhile.
    await writeFile(path.join(first.dir, "hello.txt"), "unpushed\n");
    await ws.commitAll(first, "never pushed");
    await writeFile(path.join(first.dir, "stray.txt"), "partial\n");
    const theirs = await commitToBare(bare, "agent/issue-1-3", { "theirs.txt": "from a person\n" }, "a person's push");

    const again = await ws.prepare({ taskId: 3, repo: "demo/hello", branch: "agent/issue-1-3" });
    await ws.syncToRemote(again);

    expect(await ws.headSha(again)).toBe(theirs);
    expect(await readFile(path.join(again.dir, "hello.txt"), "utf8")).toBe("round one\n");
    expect(await readFile(path.join(again.dir, "theirs.txt"), "utf8")).toBe("from a person\n");
    expect(await missing(path.join(again.dir, "stray.txt"))).toBe(true);
    expect(await ws.changedFiles(again)).toEqual(["hello.txt", "theirs.txt"]);
  });

  it("leaves a branch the remote does not have yet alone", async () => {
    const w = await ws.prepare({ taskId: 4, repo: "demo/hello", branch: "agent/issue-2-4" });
    await writeFile(path.join(w.dir, "new.txt"), "work\n");
    await ws.syncToRemote(w);
    expect(await readFile(path.join(w.dir, "new.txt"), "utf8")).toBe("work\n");
    expect((await git(bare, ["for-each-ref", "--format=%(refname:short)", "refs/heads"])).trim()).toBe("main");
  });
});
