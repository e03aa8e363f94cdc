import { commitMessage, type GitWorkspaces, type Workspace } from "@ratatoskr/git";

export interface DeliveredWork {
  /** True when this round committed something new or pushed commits the remote did not have. */
  changed: boolean;
  /** The pushed heads: `abc1234`, or `owner/a@abc1234, owner/b@def5678` with several repositories. */
  commit: string;
}

/**
 * Commits what the agent changed in each working tree and pushes the task branch without force.
 * A rejected push (the remote branch moved) throws PushRejectedError and is never forced.
 */
export async function deliverWork(
  git: Pick<GitWorkspaces, "commitAll" | "push" | "changedFiles">,
  workspaces: readonly Workspace[],
  task: { id: number; title: string | null; round: number },
): Promise<DeliveredWork> {
  const message = commitMessage({ taskId: task.id, title: task.title ?? `task ${task.id}`, round: task.round });
  let changed = false;
  const heads: string[] = [];
  for (const ws of workspaces) {
    const sha = await git.commitAll(ws, message);
    // A repository the task never touched keeps no task branch on the remote.
    if (sha === null && (await git.changedFiles(ws)).length === 0) continue;
    // Pushed even without a new commit: a commit of an attempt that died before its push goes now.
    const pushed = await git.push(ws);
    if (sha !== null || !pushed.alreadyPushed) changed = true;
    heads.push(workspaces.length > 1 ? `${ws.repo.fullName}@${pushed.sha.slice(0, 7)}` : pushed.sha.slice(0, 7));
  }
  return { changed, commit: heads.join(", ") };
}
