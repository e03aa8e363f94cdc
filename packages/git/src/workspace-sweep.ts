import { readdir, readFile, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { WorkspaceIoError } from "./errors/git-workspace.error.ts";
import type { GitLogger } from "./git-logger.ts";
import { ioError, isErrno, type WorkspaceLayout } from "./workspace-layout.ts";

export interface SweepResult {
  /** Task ids whose workspaces were removed. */
  readonly removed: number[];
}

/**
 * Removes the workspaces of tasks finished at least `retentionMs` ago. A removal that fails
 * (permissions, read-only disk) does not stop the others; all failures are thrown together at
 * the end as one {@link WorkspaceIoError}, never swallowed.
 */
export async function sweepWorkspaces(input: {
  layout: WorkspaceLayout;
  retentionMs: number;
  now: number;
  logger: GitLogger;
  isBusy: (taskId: number) => boolean;
}): Promise<SweepResult> {
  const { layout, logger } = input;
  let entries: string[];
  try {
    entries = await readdir(layout.stateRoot);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { removed: [] };
    throw ioError(`cannot list ${layout.stateRoot}`, error);
  }
  const removed: number[] = [];
  const failures: string[] = [];
  for (const entry of entries) {
    const taskId = Number(entry);
    if (!/^[1-9]\d*$/.test(entry) || !Number.isSafeInteger(taskId) || input.isBusy(taskId)) continue;
    try {
      const finishedAt = await finishedTime(layout.finishedFile(taskId));
      if (finishedAt === null || input.now - finishedAt < input.retentionMs) continue;
      await removeTree(layout.taskDir(taskId));
      await removeTree(layout.legacyTaskDir(taskId));
      await removeTree(layout.stateDir(taskId));
      removed.push(taskId);
      logger.info({ taskId, finishedAt: new Date(finishedAt).toISOString() }, "workspace removed after retention");
    } catch (error) {
      const wrapped = ioError(`cannot remove the workspace of task ${taskId}`, error);
      logger.warn({ taskId, err: wrapped.message }, "workspace sweep failed");
      failures.push(wrapped.message);
    }
  }
  if (failures.length > 0) {
    throw new WorkspaceIoError(`workspace sweep removed ${removed.length}, failed ${failures.length}: ${failures.join("; ")}`);
  }
  return { removed };
}

/** Task ids with working trees here that are not marked finished (and not being prepared now). */
export async function listUnfinishedTasks(input: { layout: WorkspaceLayout; isBusy: (taskId: number) => boolean }): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir(input.layout.stateRoot);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw ioError(`cannot list ${input.layout.stateRoot}`, error);
  }
  const ids: number[] = [];
  for (const entry of entries) {
    const taskId = Number(entry);
    if (!/^[1-9]\d*$/.test(entry) || !Number.isSafeInteger(taskId) || input.isBusy(taskId)) continue;
    if ((await finishedTime(input.layout.finishedFile(taskId)).catch(() => null)) === null) ids.push(taskId);
  }
  return ids.sort((a, b) => a - b);
}

async function finishedTime(file: string): Promise<number | null> {
  try {
    const at = Date.parse((await readFile(file, "utf8")).trim());
    return Number.isNaN(at) ? null : at;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return null;
    throw error;
  }
}

/**
 * `rm -rf` that keeps the real cause: Node's recursive rm turns an EPERM on a file into a
 * misleading ENOTDIR when it retries the file as a directory.
 */
async function removeTree(dir: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isErrno(error, "ENOENT")) return;
    throw error;
  }
  for (const entry of entries) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await removeTree(p);
    else await unlink(p);
  }
  await rmdir(dir);
}
