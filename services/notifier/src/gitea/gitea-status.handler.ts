import { PermanentError } from "@ratatoskr/runtime";
import { reconcileStatusComment, type StatusCommentDeps } from "./status-comment.reconciler.ts";

/** The `gitea-status` notify job: one reconcile of the command's status comment. */
export function createGiteaStatusHandler(deps: StatusCommentDeps | undefined) {
  return async (taskId: number) => {
    if (!deps)
      throw new PermanentError(
        `gitea status comment of task ${taskId}: GITEA_URL and GITEA_TOKEN are not set`,
      );
    return reconcileStatusComment(deps, taskId);
  };
}

export type GiteaStatusHandler = ReturnType<typeof createGiteaStatusHandler>;
