import { extendedBudgetUsd, IllegalTransitionError, type TaskEvent } from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import { parseBudgetIncrement } from "@ratatoskr/gitea";
import type { IntakeDeps } from "./intake-deps.ts";

const usd = (n: number) => `$${n.toFixed(n > 0 && n < 0.01 ? 4 : 2)}`;

/** The command of this issue/PR that its budget paused (P5): at most one, it holds the line's head. */
async function pausedCommand(deps: IntakeDeps, answer: Task): Promise<Task | undefined> {
  const line = await deps.repos.tasks.listTargetQueue(answer.targetKey ?? "");
  return line.find((t) => t.status === "paused" && t.id < answer.id);
}

async function apply(deps: IntakeDeps, paused: Task, event: TaskEvent, failureReason?: string): Promise<boolean> {
  try {
    await deps.transition(paused.id, event, failureReason ? { patch: { failureReason } } : undefined);
    return true;
  } catch (err) {
    if (err instanceof IllegalTransitionError) return false;
    throw err;
  }
}

const NOTHING_PAUSED = "Nothing here waits on its budget: no command is paused.";
const NOTHING_TO_CONTINUE = "Nothing here to continue: no command is paused by its budget or timed out.";

/**
 * P4: the newest timed-out command of the issue/PR goes back into its line and, when its turn
 * comes, its dev agent resumes the session that timed out.
 */
async function continueTimedOut(deps: IntakeDeps, answer: Task): Promise<string> {
  const timedOut = await deps.repos.tasks.findNewestInTarget(answer.targetKey ?? "", "timeout", answer.id);
  if (!timedOut || !(await apply(deps, timedOut, { type: "user.continued" }))) return NOTHING_TO_CONTINUE;
  return `Continued \`${timedOut.commandKind}\` (#${timedOut.id}), which timed out: it goes on in its own session when its turn comes.`;
}

/**
 * `/agent continue [+USD]`: the paused command gets a budget of what it has spent plus the given
 * amount (or TASK_BUDGET_USD, or its own budget again) and goes on where it stopped — a dev run
 * in its own session. Without a paused command, the newest timed-out one goes on. Returns what
 * the answering command's status comment says.
 */
export async function continueCommand(deps: IntakeDeps, answer: Task): Promise<string> {
  const amount = parseBudgetIncrement(answer.commandMessage ?? "");
  if (!amount.ok) return `\`${amount.given}\` is not an amount: give dollars, e.g. \`/agent continue +2\`.`;
  const paused = await pausedCommand(deps, answer);
  if (!paused) return continueTimedOut(deps, answer);
  const { costUsd } = await deps.repos.traces.tracesSummary(paused.id);
  const budgetUsd = extendedBudgetUsd(costUsd, amount.usd ?? deps.budgetUsd ?? paused.budgetUsd ?? 0);
  if (!(await apply(deps, paused, { type: "user.budget-extended", budgetUsd }))) return NOTHING_TO_CONTINUE;
  return `Continued \`${paused.commandKind}\` (#${paused.id}) with a budget of ${usd(budgetUsd)}; it had spent ${usd(costUsd)}.`;
}

/** `/agent stop`: ends the paused command; what it pushed stays, the next command may start. */
export async function stopCommand(deps: IntakeDeps, answer: Task): Promise<string> {
  const paused = await pausedCommand(deps, answer);
  if (!paused) return `${NOTHING_PAUSED} \`/agent cancel\` stops a running one.`;
  const reason = `stopped by @${answer.requesterLogin ?? "?"} with \`/agent stop\` (#${answer.id}) while paused by its budget; what it pushed stays`;
  if (!(await apply(deps, paused, { type: "user.budget-stopped" }, reason))) return NOTHING_PAUSED;
  return `Stopped \`${paused.commandKind}\` (#${paused.id}), which was paused by its budget; what it pushed stays.`;
}
