import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { HELLO_SERVER } from "./demo-script.ts";

const git = promisify(execFile);

export interface DemoGitRoot {
  root: string;
  /** `owner/name` of the demo's repository. */
  repo: string;
  /** Its bare repository, the "remote" the pipeline clones and pushes to. */
  bare: string;
}

/**
 * A local "git host": `<root>/<owner>/<name>.git` bare repositories. The demo's only repository
 * is `demo/hello`, with one commit on `main`.
 */
export async function createDemoGitRoot(root: string): Promise<DemoGitRoot> {
  const bare = join(root, "demo", "hello.git");
  await mkdir(bare, { recursive: true });
  await git("git", ["init", "--bare", "--initial-branch=main", bare]);
  const work = await mkdtemp(join(tmpdir(), "ratatoskr-demo-seed-"));
  try {
    const run = (...args: string[]) => git("git", ["-C", work, ...args]);
    await run("init", "--initial-branch=main");
    await writeFile(join(work, "README.md"), "# hello\n\nA tiny service for the Ratatoskr demo.\n");
    await writeFile(join(work, "server.js"), HELLO_SERVER);
    await run("add", "-A");
    await run(
      "-c",
      "user.name=Ratatoskr demo",
      "-c",
      "user.email=demo@ratatoskr.invalid",
      "commit",
      "-m",
      "Initial commit",
    );
    await run("push", bare, "main");
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return { root, repo: "demo/hello", bare };
}

/** Runs git against the bare repository (what anyone cloning it sees). */
export async function bareGit(bare: string, args: readonly string[]): Promise<string> {
  const { stdout } = await git("git", ["--git-dir", bare, ...args]);
  return stdout;
}

/** `git log --stat` of what the task branch adds to `main`, oldest commit last. */
export function branchLogStat(bare: string, branch: string): Promise<string> {
  return bareGit(bare, ["log", "--stat", `main..refs/heads/${branch}`]);
}
