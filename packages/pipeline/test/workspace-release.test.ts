import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TaskStatus } from "@ratatoskr/contracts";
import { createRepositories, type Repositories } from "@ratatoskr/db";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/db/testing";
import { createGitWorkspaces, type GitWorkspaces } from "@ratatoskr/git";
import { commitToBare, createBareRepo } from "@ratatoskr/testkit";
import { createLogger } from "@ratatoskr/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseFinishedWorkspaces } from "../src/workspaces/workspace-release.ts";

/**
 * The README promises that a finished task's working trees are removed after
 * WORKSPACE_RETENTION_MS: real trees cloned from a bare remote, real task rows in Postgres.
 */
let t: TestDatabase;
let repos: Repositories;
let dir: string;
let clock = Date.parse("2026-12-01T00:00:00Z");
const RETENTION_MS = 60_000;
const logger = createLogger({ service: "test", level: "silent" });

beforeAll(async () => {
  t = await createTestDatabase();
  repos = createRepositories(t.db.prisma);
  dir = await mkdtemp(path.join(tmpdir(), "ratatoskr-release-"));
  await createBareRepo(path.join(dir, "remotes"), "acme/app");
});

afterAll(async () => {
  await t?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Each test its own WORKSPACE_DIR (the repository and the task rows are shared). */
let roots = 0;
const workspaces = (): GitWorkspaces =>
  createGitWorkspaces({ root: path.join(dir, `work-${++roots}`), remote: { kind: "local", root: path.join(dir, "remotes") }, logger, retentionMs: RETENTION_MS, now: () => clock });

const none = async () => new Set<number>();
const exists = (p: string) => stat(p).then(() => true, () => false);

async function taskWithTree(git: GitWorkspaces, status: TaskStatus): Promise<{ id: number; tree: string }> {
  const task = await repos.tasks.createTelegramTask({ chatId: 1_000 + Math.floor(Math.random() * 1e6), maxTurns: 5, maxRounds: 3 });
  await setStatus(task.id, status);
  const ws = await git.prepare({ taskId: task.id, repo: "acme/app", branch: `ratatoskr/${task.id}` });
  return { id: task.id, tree: ws.dir };
}

const setStatus = (id: number, status: TaskStatus) => t.db.prisma.task.update({ where: { id }, data: { status } });

describe("the workspace release", () => {
  it("removes the trees of ended tasks once the retention has passed, and never a running task's", async () => {
    const git = workspaces();
    const done = await taskWithTree(git, "success");
    const failed = await taskWithTree(git, "failed");
    const running = await taskWithTree(git, "running");

    const first = await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse: none, logger });
    expect(first).toEqual({ marked: [done.id, failed.id], removed: [] });
    expect(await exists(done.tree)).toBe(true); // kept for the retention (a /continue may want it)

    clock += RETENTION_MS + 1;
    const later = await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse: none, logger });
    expect(later).toEqual({ marked: [], removed: [done.id, failed.id] });
    expect({ done: await exists(done.tree), failed: await exists(failed.tree), running: await exists(running.tree) }).toEqual({
      done: false,
      failed: false,
      running: true,
    });

    // A /continue after the removal: the next round clones again, from the pushed task branch.
    await commitToBare(path.join(dir, "remotes", "acme/app.git"), `ratatoskr/${failed.id}`, { "work.txt": "pushed before\n" }, "round 1");
    const again = await git.prepare({ taskId: failed.id, repo: "acme/app", branch: `ratatoskr/${failed.id}` });
    expect(await readFile(path.join(again.dir, "work.txt"), "utf8")).toBe("pushed before\n");
    await setStatus(failed.id, "running");

    // The running task ends: its trees go the same way.
    await setStatus(running.id, "success");
    expect((await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse: none, logger })).marked).toEqual([running.id]);
    clock += RETENTION_MS + 1;
    expect((await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse: none, logger })).removed).toEqual([running.id]);
  });

  it("leaves an ended task's trees alone while a job of it still runs (a cancelled dev round pushes what it did)", async () => {
    const git = workspaces();
    const cancelled = await taskWithTree(git, "cancelled");
    const busy = new Set([cancelled.id]);
    const inUse = async () => busy;
    clock += RETENTION_MS + 1;
    expect(await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse, logger })).toEqual({ marked: [], removed: [] });
    busy.delete(cancelled.id);
    expect((await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse, logger })).marked).toEqual([cancelled.id]);
    expect(await exists(cancelled.tree)).toBe(true);
  });

  it("takes its mark back when the task moves on between its read and its mark, so the tree is kept", async () => {
    const git = workspaces();
    const timedOut = await taskWithTree(git, "timeout");
    // A /continue lands right after the release read the task as ended.
    const tasks: Pick<Repositories["tasks"], "whichInStatus"> = {
      whichInStatus: async (ids, statuses) => {
        const seen = await repos.tasks.whichInStatus(ids, statuses);
        if (seen.includes(timedOut.id)) await setStatus(timedOut.id, "approved");
        return seen;
      },
    };
    expect((await releaseFinishedWorkspaces({ git, tasks, inUse: none, logger })).marked).toEqual([]);
    clock += RETENTION_MS + 1;
    expect((await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse: none, logger })).removed).toEqual([]);
    expect(await exists(timedOut.tree)).toBe(true);
  });

  it("lets a continued task's next round take its tree back from the mark", async () => {
    const git = workspaces();
    const task = await taskWithTree(git, "failed");
    expect((await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse: none, logger })).marked).toEqual([task.id]);
    // /continue: the task runs again and its job prepares the tree before the retention ends.
    await setStatus(task.id, "running");
    await git.prepare({ taskId: task.id, repo: "acme/app", branch: `ratatoskr/${task.id}` });
    clock += RETENTION_MS + 1;
    expect(await releaseFinishedWorkspaces({ git, tasks: repos.tasks, inUse: none, logger })).toEqual({ marked: [], removed: [] });
    expect(await exists(task.tree)).toBe(true);
  });
});
