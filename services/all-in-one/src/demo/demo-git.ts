import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const git = promisify(execFile);

/**
 * A local "git host": `<root>/<owner>/<name>.git` bare repositories. The demo's only repository
 * is `demo/hello`, with one commit on `main`.
 */
export async function createDemoGitRoot(root: string): Promise<{ root: string; repo: string }> {
  const bare = join(root, "demo", "hello.git");
  await mkdir(bare, { recursive: true });
  await git("git", ["init", "--bare", "--initial-branch=main", bare]);
  const work = await mkdtemp(join(tmpdir(), "ratatoskr-demo-seed-"));
  try {
    const run = (...args: string[]) => git("git", ["-C", work, ...args]);
    await run("init", "--initial-branch=main");
    await writeFile(join(work, "README.md"), "# hello\n\nA tiny service for the Ratatoskr demo.\n");
    await writeFile(join(work, "server.js"), 'require("http").createServer((_, res) => res.end("hello")).listen(3000);\n');
    await run("add", "-A");
    await run("-c", "user.name=Ratatoskr demo", "-c", "user.email=demo@ratatoskr.invalid", "commit", "-m", "Initial commit");
    await run("push", bare, "main");
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return { root, repo: "demo/hello" };
}
