import { lstat, readFile, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { WorkspaceIoError } from "./errors/git-workspace.error.ts";
import { ioError, writeFileAtomic } from "./workspace-layout.ts";

/**
 * The `origin` of every working tree the agent sees, fetch and push: a name, not a place. The
 * service fetches and pushes by explicit URL; an agent's `git push` goes nowhere, even where the
 * real remote (a local bare repository) would be a writable path.
 */
export const NO_PUSH_REMOTE = "only-ratatoskr-pushes";

/**
 * Files of `.git` that make git read configuration or objects from elsewhere. The service never
 * creates them; an agent that did could have the service's own git commands run its programs
 * (`filter.*.clean`, `core.*` …), rewrite where they send credentials (`http.proxy`) or work on
 * another tree (`core.worktree`, `commondir`).
 */
const FOREIGN_GIT_FILES = ["commondir", "config.worktree", path.join("objects", "info", "alternates")];

/** Keeps the service's copy of a fresh tree's `.git/config`, outside the tree. */
export async function saveGitConfig(dir: string, copy: string): Promise<void> {
  const config = await readFile(path.join(dir, ".git", "config"), "utf8").catch((error: unknown) => {
    throw ioError(`cannot read ${dir}/.git/config`, error);
  });
  await writeFileAtomic(copy, config);
}

/**
 * Makes a working tree's git metadata the service's again before the service runs git in it:
 * the tree and its `.git` must be real directories where the layout put them (not symlinks to
 * another task's tree), `.git/config` is the saved copy, and files that pull in foreign
 * configuration are removed. Whatever the agent wrote there is gone.
 */
export async function restoreGitDir(input: { dir: string; tasksRoot: string; copy: string }): Promise<void> {
  const { dir, tasksRoot } = input;
  const expected = path.join(await realpath(tasksRoot), path.relative(tasksRoot, dir));
  const actual = await realpath(dir).catch(() => undefined);
  const gitDir = path.join(dir, ".git");
  const git = await lstat(gitDir).catch(() => undefined);
  if (actual !== expected || !git?.isDirectory()) {
    throw new WorkspaceIoError(`the working tree ${path.basename(dir)} is not where it was cloned (replaced by a link?); it is not used`);
  }
  const config = await readFile(input.copy, "utf8").catch((error: unknown) => {
    throw ioError("cannot read the saved git config", error);
  });
  try {
    await writeFile(path.join(gitDir, "config"), config);
    for (const file of FOREIGN_GIT_FILES) await rm(path.join(gitDir, file), { force: true, recursive: true });
  } catch (error) {
    throw ioError(`cannot restore ${path.basename(dir)}/.git`, error);
  }
}
