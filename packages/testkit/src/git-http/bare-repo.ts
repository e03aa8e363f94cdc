import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

const GIT_ENV = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Someone Else",
  GIT_AUTHOR_EMAIL: "someone@example.test",
  GIT_COMMITTER_NAME: "Someone Else",
  GIT_COMMITTER_EMAIL: "someone@example.test",
};

/** Runs git for test fixtures (plain execFile, isolated from the host's git config). */
export async function gitFixture(cwd: string, args: readonly string[]): Promise<string> {
  const { stdout } = await exec("git", [...args], { cwd, env: GIT_ENV });
  return stdout;
}

/**
 * Creates `<root>/<owner>/<name>.git` as a bare repository whose default branch holds `files`
 * in one commit (none when `files` is empty: an empty repository). Returns the bare repo's path.
 */
export async function createBareRepo(
  root: string,
  fullName: string,
  files: Record<string, string> = { "README.md": "# fixture\n" },
  defaultBranch = "main",
): Promise<string> {
  const bare = path.join(root, `${fullName}.git`);
  await mkdir(path.dirname(bare), { recursive: true });
  await gitFixture(root, ["init", "-q", "--bare", `--initial-branch=${defaultBranch}`, bare]);
  if (Object.keys(files).length > 0) await commitToBare(bare, defaultBranch, files, "initial commit");
  return bare;
}

/**
 * Pushes one commit with `files` onto `branch` of a bare repository ("someone else pushed"); a
 * new branch starts from the default branch. Returns the new commit's sha.
 */
export async function commitToBare(bare: string, branch: string, files: Record<string, string>, message: string): Promise<string> {
  const work = await mkdtemp(path.join(tmpdir(), "bare-commit-"));
  try {
    await gitFixture(work, ["init", "-q", `--initial-branch=${branch}`]);
    const has = (await gitFixture(bare, ["for-each-ref", "--format=%(refname)", `refs/heads/${branch}`])).trim() !== "";
    const hasHead = (await gitFixture(bare, ["for-each-ref", "--format=%(refname)", "refs/heads"])).trim() !== "";
    if (has || hasHead) {
      // A new branch starts from the default branch, like a branch made in a web UI.
      await gitFixture(work, ["fetch", "-q", bare, has ? `refs/heads/${branch}` : "HEAD"]);
      await gitFixture(work, ["reset", "-q", "--hard", "FETCH_HEAD"]);
    }
    for (const [name, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(work, name)), { recursive: true });
      await writeFile(path.join(work, name), content);
    }
    await gitFixture(work, ["add", "-A"]);
    await gitFixture(work, ["commit", "-q", "-m", message]);
    await gitFixture(work, ["push", "-q", bare, `HEAD:refs/heads/${branch}`]);
    return (await gitFixture(work, ["rev-parse", "HEAD"])).trim();
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
