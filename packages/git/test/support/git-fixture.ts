import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createGitWorkspaces, type GitLogger, type GitWorkspaces, type GitWorkspacesOptions, type RemoteSpec } from "../../src/index.ts";

/** A logger that keeps every line, so tests can check what would have reached the logs. */
export function memoryLogger(): GitLogger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (obj: object, msg?: string) => lines.push(`${level} ${msg ?? ""} ${JSON.stringify(obj)}`);
  return { lines, info: log("info"), warn: log("warn"), debug: log("debug") };
}

export interface GitFixture {
  readonly dir: string;
  /** Where bare remotes live (`<remotes>/<owner>/<name>.git`). */
  readonly remotes: string;
  /** WORKSPACE_DIR. */
  readonly workspaceRoot: string;
  readonly logger: ReturnType<typeof memoryLogger>;
  workspaces(overrides?: Partial<GitWorkspacesOptions> & { remote?: RemoteSpec }): GitWorkspaces;
  cleanup(): Promise<void>;
}

export async function gitFixture(): Promise<GitFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), "ratatoskr-git-"));
  const remotes = path.join(dir, "remotes");
  const workspaceRoot = path.join(dir, "work");
  const logger = memoryLogger();
  return {
    dir,
    remotes,
    workspaceRoot,
    logger,
    workspaces: (overrides = {}) =>
      createGitWorkspaces({ root: workspaceRoot, remote: { kind: "local", root: remotes }, logger, retentionMs: 60_000, ...overrides }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
