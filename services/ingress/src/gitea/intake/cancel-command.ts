import { IllegalTransitionError } from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import type { IntakeDeps } from "./intake-deps.ts";
import { isWorkCommand } from "./intake-deps.ts";

/**
 * `/agent cancel` (G7): cancels the running command of the issue/PR, or if none runs the next
 * waiting one. A running agent is interrupted; what it had done is pushed to its branch, as on every door. Returns what
 * the cancel command's own status comment says.
 */
export async function cancelCommand(deps: IntakeDeps, cancel: Task): Promise<string> {
  const line = (await deps.repos.tasks.listTargetQueue(cancel.targetKey ?? "")).filter(
    (t) => isWorkCommand(t.commandKind) && t.id < cancel.id && t.status !== "received",
  );
  const victim = line.find((t) => t.status === "running" || t.status === "paused") ?? line[0];
  if (!victim) return "Nothing to cancel: no command is running or waiting here.";
  const wasRunning = victim.status === "running";
  try {
    await deps.transition(
      victim.id,
      { type: "user.cancelled" },
      {
        patch: {
          failureReason: `cancelled by @${cancel.requesterLogin ?? "?"} with \`/agent cancel\` (#${cancel.id})`,
        },
      },
    );
  } catch (err) {
    if (err instanceof IllegalTransitionError)
      return `Nothing to cancel: #${victim.id} had already finished.`;
    throw err;
  }
  if (wasRunning && victim.agentServerUrl && victim.agentSessionId) {
    await deps
      .interrupt(victim.agentServerUrl, victim.agentSessionId)
      .catch((err: unknown) =>
        deps.logger.warn({ err, taskId: victim.id }, "could not interrupt the cancelled command's session"),
      );
  }
  const what = `\`${victim.commandKind}\` (#${victim.id}) by @${victim.requesterLogin}`;
  if (victim.status === "paused") return `Cancelled ${what}, which was paused by its budget; what it pushed stays.`;
  return wasRunning
    ? `Cancelled ${what}, which was running: its agent was interrupted and what it had done is kept on its branch.`
    : `Cancelled ${what}, which was waiting; it will not run.`;
}
