import { execFile } from "node:child_process";
import { access, mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { createBareRepo } from "@ratatoskr/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WorkspaceIoError, type GitWorkspaces } from "../src/index.ts";
import { gitFixture, type GitFixture } from "./support/git-fixture.ts";

const exec = promisify(execFile);
const HOUR = 3_600_000;

let fx: GitFixture;
let clock: number;
let ws: GitWorkspaces;

beforeEach(async () => {
  fx = await gitFixture();
  await createBareRepo(fx.remotes, "demo/hello");
  clock = Date.parse("2026-11-30T12:00:00Z");
  ws = fx.workspaces({ retentionMs: 24 * HOUR, now: () => clock });
});
afterEach(async () => {
  await exec("chattr", ["-R", "-i", fx.dir]).catch(() => undefined);
  await fx.cleanup();
});

const present = (p: string) => access(p).then(() => true, () => false);

describe("retention sweep", () => {
  it("removes only workspaces of tasks finished longer ago than the retention", async () => {
    const old = await ws.prepare({ taskId: 1, repo: "demo/hello", branch: "ratatoskr/1-x" });
    const recent = await ws.prepare({ taskId: 2, repo: "demo/hello", branch: "ratatoskr/2-x" });
    const running = await ws.prepare({ taskId: 3, repo: "demo/hello", branch: "ratatoskr/3-x" });
    await ws.markFinished(1);
    clock += 20 * HOUR;
    await ws.markFinished(2);
    clock += 5 * HOUR;

    expect(await ws.sweep()).toEqual({ removed: [1] });
    expect(await present(old.dir)).toBe(false);
    expect(await present(ws.taskDir(1))).toBe(false);
    expect(await present(recent.dir)).toBe(true);
    expect(await present(running.dir)).toBe(true);
    expect(await ws.sweep()).toEqual({ removed: [] });
  });

  it("keeps a finished task that was picked up again (retry) before the sweep", async () => {
    await ws.prepare({ taskId: 4, repo: "demo/hello", branch: "ratatoskr/4-x" });
    await ws.markFinished(4);
    clock += 48 * HOUR;
    const again = await ws.prepare({ taskId: 4, repo: "demo/hello", branch: "ratatoskr/4-x" });

    expect(await ws.sweep()).toEqual({ removed: [] });
    expect(await present(again.dir)).toBe(true);
  });

  it("reports a workspace it cannot remove instead of swallowing it, and still removes the others", async (ctx) => {
    const stuck = await ws.prepare({ taskId: 5, repo: "demo/hello", branch: "ratatoskr/5-x" });
    const gone = await ws.prepare({ taskId: 6, repo: "demo/hello", branch: "ratatoskr/6-x" });
    await writeFile(path.join(stuck.dir, "locked.txt"), "cannot delete me\n");
    const immutable = await exec("chattr", ["+i", path.join(stuck.dir, "locked.txt")]).then(() => true, () => false);
    if (!immutable) ctx.skip(); // needs a file system with immutable files (ext4, xfs) and CAP_LINUX_IMMUTABLE
    await ws.markFinished(5);
    await ws.markFinished(6);
    clock += 25 * HOUR;

    const sweep = ws.sweep();
    await expect(sweep).rejects.toBeInstanceOf(WorkspaceIoError);
    await expect(sweep).rejects.toThrow(/cannot remove the workspace of task 5: permission denied/);
    expect(await present(gone.dir)).toBe(false);
  });

  it("reports a full disk when marking a task finished", async () => {
    await ws.prepare({ taskId: 7, repo: "demo/hello", branch: "ratatoskr/7-x" });
    // The next write of the mark goes to /dev/full, which fails every write with ENOSPC.
    const mark = path.join(fx.workspaceRoot, "state", "7", "finished");
    await symlink("/dev/full", `${mark}.${process.pid}.tmp`);

    const attempt = ws.markFinished(7);
    await expect(attempt).rejects.toBeInstanceOf(WorkspaceIoError);
    await expect(attempt).rejects.toThrow(/disk full/);
  });

  it("reports a workspace root it cannot create as a workspace error, not a git one", async () => {
    const blocker = path.join(fx.dir, "not-a-dir");
    await writeFile(blocker, "a file where the workspace root should be\n");
    await mkdir(fx.remotes, { recursive: true });
    const broken = fx.workspaces({ root: path.join(blocker, "work") });

    await expect(broken.prepare({ taskId: 8, repo: "demo/hello", branch: "ratatoskr/8-x" })).rejects.toBeInstanceOf(WorkspaceIoError);
  });
});
