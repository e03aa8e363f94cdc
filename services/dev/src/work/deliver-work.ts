import type { GitWorkspaces, Workspace } from "@ratatoskr/git";

export interface DeliveredWork {
  /**
   * True when this round committed something new, pushed commits the remote did not have, or
   * finds its own commit already on the branch (an earlier attempt pushed it and died).
   */
  changed: boolean;
  /** The pushed heads: `abc1234`, or `owner/a@abc1234, owner/b@def5678` with several repositories. */
  commit: string;
}

export interface RoundCommit {
  /** The commit message; its last line is `trailer`. */
  message: string;
  /** The round's own line (see `roundTrailer`): a commit holding it is this round's work. */
  trailer: string;
}

/**
 * Commits what the agent changed in each working tree and pushes the task branch without force.
 * A rejected push (the remote branch moved) throws PushRejectedError and is never forced.
 */
export async function deliverWork(
  git: Pick<GitWorkspaces, "commitAll" | "push" | "changedFiles" | "branchMessages">,
  workspaces: readonly Workspace[],
  round: RoundCommit,
): Promise<DeliveredWork> {
  let changed = false;
  const heads: string[] = [];
  for (const ws of workspaces) {
    const sha = await git.commitAll(ws, round.message);
    // A repository the task never touched keeps no task branch on the remote.
    if (sha === null && (await git.changedFiles(ws)).length === 0) continue;
    // Pushed even without a new commit: a commit of an attempt that died before its push goes now.
    const pushed = await git.push(ws);
    if (sha !== null || !pushed.alreadyPushed || (await holdsRound(git, ws, round.trailer))) changed = true;
    heads.push(workspaces.length > 1 ? `${ws.repo.fullName}@${pushed.sha.slice(0, 7)}` : pushed.sha.slice(0, 7));
  }
  return { changed, commit: heads.join(", ") };
}

/** Whether the branch already carries a commit of this round: an attempt that died after its push. */
async function holdsRound(git: Pick<GitWorkspaces, "branchMessages">, ws: Workspace, trailer: string): Promise<boolean> {
  const messages = await git.branchMessages(ws);
  return messages.some((message) => message.split("\n").some((line) => line.trim() === trailer));
}
