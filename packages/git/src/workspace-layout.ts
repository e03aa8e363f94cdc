import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { WorkspaceIoError } from "./errors/git-workspace.error.ts";
import type { RepoRef } from "./repo-name.ts";

/**
 * Where things live under `WORKSPACE_DIR`:
 * - `tasks/<taskId>-<tag>/<owner>/<name>/` — the working trees (what the agent sees); the tag
 *   makes a task's directory unguessable (task-dir-key.ts);
 * - `state/<taskId>/<owner>/<name>.json` — branch and base commit of each tree, and `….gitconfig`
 *   the tree's own git config as cloned, kept outside the trees so an agent cannot edit them;
 * - `state/<taskId>/finished` — when the task finished (ISO time), for the retention sweep.
 */
export interface WorkspaceLayout {
  readonly tasksRoot: string;
  readonly stateRoot: string;
  taskDir(taskId: number): string;
  /** `tasks/<taskId>`, where earlier versions kept a task's trees (removed by the sweep). */
  legacyTaskDir(taskId: number): string;
  repoDir(taskId: number, repo: RepoRef): string;
  metaFile(taskId: number, repo: RepoRef): string;
  /** The service's copy of a tree's fresh `.git/config` (git-dir-guard.ts). */
  gitConfigCopy(taskId: number, repo: RepoRef): string;
  stateDir(taskId: number): string;
  finishedFile(taskId: number): string;
}

/** `tag` names a task's directory (see task-dir-key.ts); tests may pass a fixed one. */
export function workspaceLayout(root: string, tag: (taskId: string) => string): WorkspaceLayout {
  const abs = path.resolve(root);
  const tasksRoot = path.join(abs, "tasks");
  const stateRoot = path.join(abs, "state");
  const id = (taskId: number) => {
    if (!Number.isSafeInteger(taskId) || taskId <= 0) throw new RangeError(`task id must be a positive integer, got ${taskId}`);
    return String(taskId);
  };
  return {
    tasksRoot,
    stateRoot,
    taskDir: (taskId) => path.join(tasksRoot, `${id(taskId)}-${tag(id(taskId))}`),
    legacyTaskDir: (taskId) => path.join(tasksRoot, id(taskId)),
    repoDir: (taskId, repo) => path.join(tasksRoot, `${id(taskId)}-${tag(id(taskId))}`, repo.owner, repo.name),
    metaFile: (taskId, repo) => path.join(stateRoot, id(taskId), repo.owner, `${repo.name}.json`),
    gitConfigCopy: (taskId, repo) => path.join(stateRoot, id(taskId), repo.owner, `${repo.name}.gitconfig`),
    stateDir: (taskId) => path.join(stateRoot, id(taskId)),
    finishedFile: (taskId) => path.join(stateRoot, id(taskId), "finished"),
  };
}

/** What we remember about one task's working tree between rounds. */
export interface WorkspaceMeta {
  readonly branch: string;
  readonly baseBranch: string;
  readonly baseSha: string;
}

export async function readMeta(file: string): Promise<WorkspaceMeta | null> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<WorkspaceMeta>;
    if (typeof parsed.branch !== "string" || typeof parsed.baseBranch !== "string" || typeof parsed.baseSha !== "string") return null;
    return { branch: parsed.branch, baseBranch: parsed.baseBranch, baseSha: parsed.baseSha };
  } catch (error) {
    if (isErrno(error, "ENOENT") || error instanceof SyntaxError) return null;
    throw ioError(`cannot read ${file}`, error);
  }
}

/** Writes via a temporary file and rename, so a crash never leaves half a file. */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(tmp, content);
    await rename(tmp, file);
  } catch (error) {
    throw ioError(`cannot write ${file}`, error);
  }
}

export function isErrno(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

/** Wraps a file-system failure (ENOSPC, EACCES, EROFS, …) so callers see it, typed. */
export function ioError(what: string, error: unknown): WorkspaceIoError {
  if (error instanceof WorkspaceIoError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const hint = code === "ENOSPC" ? "disk full" : code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EROFS" ? "read-only file system" : (code ?? "error");
  return new WorkspaceIoError(`workspace: ${what}: ${hint} (${error instanceof Error ? error.message : String(error)})`, { cause: error });
}
