import type { DbClient } from "@ratatoskr/db";

/**
 * WORKAROUND until the reducer has an event for "the draft names repositories that do not
 * exist" (proposed: `analyst.repos-missing { missing, consumedTurns, forced }` notifying
 * `task.repo-not-found`). Meanwhile the analysis settles with `analyst.asked`, whose effect
 * stores a generic `task.questions` message; this turns that very message, written in the same
 * transaction and not yet sent, into the specific `task.repo-not-found` one. The person gets
 * one message, delivered by the transition's own outbox job, so it cannot be lost.
 *
 * Call only from `alongside` of an `analyst.asked` transition that was not superseded (the task
 * is no longer analysing): only then did the reducer emit the message.
 */
export async function turnQuestionsIntoRepoNotFound(
  tx: DbClient,
  taskId: number,
  missing: readonly string[],
): Promise<boolean> {
  const notice = await tx.notification.findFirst({
    where: { taskId, template: "task.questions", status: "pending" },
    orderBy: { id: "desc" },
  });
  if (!notice) return false;
  await tx.notification.update({
    where: { id: notice.id },
    data: { template: "task.repo-not-found", params: { taskId, missing: [...missing] } },
  });
  return true;
}
