import { IllegalTransitionError, type TaskEvent } from "@ratatoskr/contracts";
import type { Task, TaskPatch } from "@ratatoskr/db";
import { agentUsage } from "@ratatoskr/gitea";
import { skipped } from "@ratatoskr/runtime";
import { continueCommand, stopCommand } from "./budget-command.ts";
import { cancelCommand } from "./cancel-command.ts";
import { earlierCommandsRouted } from "./earlier-commands.ts";
import type { IntakeDeps } from "./intake-deps.ts";
import { prepareWork } from "./prepare-work.ts";
import { queueEntries, renderQueue } from "./target-queue.ts";

const MAY_RUN = new Set(["write", "admin", "owner"]);

/**
 * Authorizes and routes one stored command (G2, G3, G7): rejected unless the commenter has
 * write, admin or owner permission; a usage answer for unknown subcommands; `status`, `cancel`,
 * `continue` and `stop` answered at once (`status` and `cancel` once the commands posted before
 * them are in the line or turned away); work commands queued for their issue/PR.
 */
export async function routeCommand(deps: IntakeDeps, taskId: number) {
  const task = await deps.repos.tasks.findById(taskId);
  if (!task) return skipped(`task ${taskId} does not exist`);
  if (task.status !== "received") return skipped(`task ${taskId} is already ${task.status}`);
  const where = { owner: task.repoOwner ?? "", repo: task.repoName ?? "" };
  const login = task.requesterLogin ?? "";
  const permission = await deps.gitea.permission(where, login);
  if (!MAY_RUN.has(permission)) {
    return settle(
      deps,
      task,
      { type: "command.rejected", reason: "permission" },
      {
        failureReason: `@${login} has ${permission === "none" ? "no" : `${permission}`} permission on ${where.owner}/${where.repo}; write, admin or owner is needed`,
      },
    );
  }
  if (task.commandKind === null) {
    const given = task.commandMessage
      ? `\`${task.commandMessage}\` is not a command here`
      : "a command is missing";
    return settle(
      deps,
      task,
      { type: "command.rejected", reason: "usage" },
      {
        failureReason: `${given}. Usage:\n${agentUsage(task.targetType === "pr" ? "pr" : "issue")}`,
      },
    );
  }
  if ((task.commandKind === "status" || task.commandKind === "cancel") && !(await earlierCommandsRouted(deps.db.pool, task)))
    deps.logger.warn({ taskId: task.id, targetKey: task.targetKey }, "an earlier command here is still being authorized; answering without it");
  if (task.commandKind === "status") {
    const entries = queueEntries(await deps.repos.tasks.listTargetQueue(task.targetKey ?? ""));
    return settle(deps, task, { type: "command.answered" }, { resultText: renderQueue(entries) });
  }
  if (task.commandKind === "cancel" || task.commandKind === "continue" || task.commandKind === "stop") {
    const answer = { cancel: cancelCommand, continue: continueCommand, stop: stopCommand }[task.commandKind];
    return settle(deps, task, { type: "command.answered" }, { resultText: await answer(deps, task) });
  }
  const prepared = await prepareWork(deps, task);
  if (!prepared.ok)
    return settle(deps, task, { type: "command.rejected", reason: "refused" }, { failureReason: prepared.reason });
  return settle(deps, task, { type: "command.authorized", budgetUsd: deps.budgetUsd }, prepared.patch);
}

async function settle(deps: IntakeDeps, task: Task, event: TaskEvent, patch: TaskPatch) {
  try {
    const applied = await deps.transition(task.id, event, { patch });
    deps.logger.info({ taskId: task.id, status: applied.task.status }, "gitea command routed");
    return { status: applied.task.status };
  } catch (err) {
    if (err instanceof IllegalTransitionError) return skipped(`task ${task.id} moved on: ${err.message}`);
    throw err;
  }
}

/**
 * The route job gave up (Gitea unreachable through every attempt, or refusing a read such as a
 * deleted issue): the command is turned away saying why, so it never hangs `received` and the
 * commands behind it in its line are not held up by it.
 */
export async function failRoute(deps: IntakeDeps, taskId: number, err: unknown): Promise<void> {
  const why = err instanceof Error ? err.message : String(err);
  await deps
    .transition(
      taskId,
      { type: "command.rejected", reason: "unroutable" },
      { patch: { failureReason: `the command could not be checked with Gitea: ${why}. Post it again once Gitea answers.` } },
    )
    .catch((failure: unknown) => {
      if (!(failure instanceof IllegalTransitionError)) throw failure;
    });
}
