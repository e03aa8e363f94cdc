import { relative } from "node:path";
import { branchName, type GitWorkspaces, type Workspace } from "@ratatoskr/git";

/** The task columns a workspace needs. */
export interface WorkspaceTask {
  id: number;
  title: string | null;
  repos: readonly string[];
  branch: string | null;
}

/** The task branch: the stored one once a round chose it, else a new one from the title. */
export function taskBranch(task: WorkspaceTask): string {
  return task.branch ?? branchName(task.id, task.title ?? `task ${task.id}`);
}

/**
 * The implement command a PR's `/agent iterate` continues, from the PR's branch
 * (`agent/issue-<N>-<taskId>`): the iterate works in that command's trees and goes on in its
 * sessions. Undefined for every other task.
 */
export function iteratedCommandOf(task: { branch: string | null; commandKind: string | null; targetType: string | null }): number | undefined {
  const match = /^agent\/issue-\d+-(\d+)$/.exec(task.branch ?? "");
  return task.commandKind === "iterate" && task.targetType === "pr" && match ? Number(match[1]) : undefined;
}

/** One working tree per repository of the task, all on the task branch, in the draft's order. */
export async function prepareTaskWorkspaces(git: GitWorkspaces, task: WorkspaceTask): Promise<Workspace[]> {
  if (task.repos.length === 0) throw new Error(`task ${task.id} names no repository`);
  const branch = taskBranch(task);
  const workspaces: Workspace[] = [];
  // One at a time: a clone is disk- and network-bound, and errors then name one repository.
  for (const repo of task.repos) workspaces.push(await git.prepare({ taskId: task.id, repo, branch }));
  return workspaces;
}

/** Where each repository is, relative to the directory the agent session works in. */
export function workspaceLines(sessionDir: string, workspaces: readonly Workspace[]): string[] {
  return workspaces.map((ws) => `- ${ws.repo.fullName}: ./${relative(sessionDir, ws.dir) || "."} (branch ${ws.branch})`);
}
